// The write side of import: mappers from normalised records to rows, batched multi-row upserts, and the derived-field
// pass, all inside the one transaction of an import run.
import type { Insertable, Kysely, Transaction } from 'kysely';
import type { ImportKind, RecordsByKind } from '../../domain/records.js';
import { intelKeys, ownIntel } from '../../domain/intel.js';
import { recordChecks } from './checks.js';
import { recomputeDerived } from '../derive/fields.js';
import { addDerivations, deriveTenantRisks, NO_DERIVATION } from '../derive/risks/derive.js';
import { type RiskDerivation } from '../types.js';
import { feedIntel, hasFindingFeeds, intelOf } from '../feeds/intel.js';
import { documentKey } from '../read/vulnerabilities/documents.js';
import { findingAliases, findingDocumentBytes, findingPackages, findingRow, PACKAGE_COLUMNS } from './rows/findings.js';
import {
  deleteFindingRows,
  existingFindings,
  newFindingIds,
  resolveFindings,
  scanReads,
  type ExistingFinding,
} from './stored.js';
import { hasVexStatements, rematchVex, replaceVexDocument } from '../derive/vex.js';
import { unchangedAsset, unchangedFindings } from './compare.js';
import { bumpDataVersion, tenantOrganization } from '../accounts/tenants.js';
import { appendTo } from '../../lib/collections.js';
import { fromTenant } from '../tx/tenant.js';
import { takeTenantTurn } from '../tx/turns.js';
import { type WaitReason } from '../types.js';
import type { Database } from '../db/tables.js';
import { assetDocumentRow, assetRow } from './rows/assets.js';
import { dialectOf, insertRows, upsertRows } from '../db/insert-rows.js';
import type { IngestWriter } from '../types.js';

const json = (value: unknown): Buffer => Buffer.from(JSON.stringify(value));
const flag = (value: boolean): number => (value ? 1 : 0);

type Db = Kysely<Database> | Transaction<Database>;

/** A batch of the writer (at most 800 rows of at most 17 columns) in one statement: within both databases' limits. */
const upsert = <T extends keyof Database>(db: Db, table: T, key: readonly string[], rows: Insertable<Database[T]>[]) =>
  upsertRows(db, table, key, rows, rows.length);

const findingKey = (tenantId: string, assetId: string, vulnerabilityId: string): string =>
  `${tenantId}\u0000${assetId}\u0000${vulnerabilityId}`;

/** Up to this many assets in a batch, existing findings are looked up per asset (see the vulnerability flusher). */
const FEW_ASSETS = 8;

const BATCH_ROWS: Record<ImportKind, number> = {
  tenant: 500,
  environment: 500,
  integration: 500,
  assetGroup: 200,
  exemption: 200,
  asset: 400,
  vulnerability: 800,
  risk: 500,
};

/**
 * Buffers records per kind and writes them in batches. Tracks which tenants and assets the run touched so that
 * derived fields are recomputed for exactly what may have changed.
 */
export function ingestWriter(
  tx: Transaction<Database>,
  options: {
    deriveRisksAt?: string | undefined;
    /** Runs before rows of a finding's packages or aliases are replaced or deleted by key (deferred key indexes). */
    beforeReplace?: () => Promise<void>;
    /** Runs once the buffered rows are written, before settling reads them back (statistics of filled tables). */
    beforeSettle?: () => Promise<void>;
    /** Called when the run waits for another write to a tenant to commit (PostgreSQL). */
    onWait?: ((reason: WaitReason) => void) | undefined;
  } = {},
): IngestWriter {
  const beforeReplace = options.beforeReplace ?? (() => Promise.resolve());
  /** The tenants this run has taken its turn with. */
  const turns = new Set<string>();
  const pending: { [K in ImportKind]: RecordsByKind[K][] } = {
    tenant: [],
    environment: [],
    integration: [],
    assetGroup: [],
    exemption: [],
    asset: [],
    vulnerability: [],
    risk: [],
  };
  // What settle() must recompute (derived fields, risks), and which tenants finish() bumps the data version of.
  const touched = new Map<string, 'all' | Set<string>>();
  const written = new Set<string>();
  let feedsLoaded: Promise<boolean> | undefined;
  // Tenants whose VEX exemptions were re-matched since their last write: finish() need not match them again.
  const vexCurrent = new Set<string>();
  const touch = (tenantId: string, assetId?: string) => {
    written.add(tenantId);
    const current = touched.get(tenantId);
    if (assetId === undefined) touched.set(tenantId, 'all');
    else if (current === undefined) touched.set(tenantId, new Set([assetId]));
    else if (current !== 'all') current.add(assetId);
  };

  const flushers: { [K in ImportKind]: (records: RecordsByKind[K][]) => Promise<void> } = {
    tenant: (records) =>
      upsert(
        tx,
        'tenants',
        ['tenant_id'],
        records.map((r) => ({ tenant_id: r.tenantId, organization_id: r.organizationId, name: r.name })),
      ),
    environment: (records) =>
      upsert(
        tx,
        'environments',
        ['tenant_id', 'environment_id'],
        records.map((r) => ({
          tenant_id: r.tenantId,
          environment_id: r.environmentId,
          environment_id_lc: r.environmentId.toLowerCase(),
          name: r.name,
          is_production: flag(r.isProduction),
        })),
      ),
    integration: (records) =>
      upsert(
        tx,
        'integrations',
        ['tenant_id', 'integration_id'],
        records.map((r) => ({
          tenant_id: r.tenantId,
          integration_id: r.integrationId,
          environment_id: r.environmentId,
          doc: json(r.integration),
        })),
      ),
    assetGroup: async (records) => {
      await upsert(
        tx,
        'asset_groups',
        ['tenant_id', 'asset_group_id'],
        records.map((r) => ({ tenant_id: r.tenantId, asset_group_id: r.assetGroupId, name: r.name })),
      );
      // A group's membership is replaced whole, like every imported record.
      for (const r of records) {
        await tx
          .deleteFrom('asset_group_members')
          .where('tenant_id', '=', r.tenantId)
          .where('asset_group_id', '=', r.assetGroupId)
          .execute();
        const members = [...new Set(r.assetIds)].map((assetId) => ({
          tenant_id: r.tenantId,
          asset_group_id: r.assetGroupId,
          asset_id: assetId,
        }));
        for (let i = 0; i < members.length; i += 1000)
          await tx
            .insertInto('asset_group_members')
            .values(members.slice(i, i + 1000))
            .execute();
      }
    },
    exemption: (records) =>
      upsert(
        tx,
        'exemptions',
        ['tenant_id', 'exemption_id'],
        records.map((r) => ({ tenant_id: r.tenantId, exemption_id: r.exemptionId, doc: JSON.stringify(r.exemption) })),
      ),
    asset: async (records) => {
      await upsert(tx, 'assets', ['tenant_id', 'id'], records.map(assetRow));
      await upsert(tx, 'asset_documents', ['tenant_id', 'asset_id'], records.map(assetDocumentRow));
    },
    vulnerability: async (records) => {
      // A finding's packages are replaced whole, so the packages of findings that already exist are deleted first.
      // Which exist is read by index, two ways: a batch of a few assets (a scan: one asset, many findings) asks per
      // asset for the batch's own vulnerability ids, so an asset with many findings is not read whole for every
      // batch; a batch of many assets (an import: few findings each) asks for all their findings at once. Asking for
      // both lists at once lets PostgreSQL probe every (vulnerability, asset) pair through the vulnerability-id index
      // (0.45 s per batch of 800 on 1M findings); a fresh import then deletes nothing.
      const byAsset = new Map<string, { tenantId: string; assetId: string; ids: Set<string> }>();
      for (const { tenantId, vulnerability: v } of records) {
        const key = `${tenantId}\u0000${v.assetId}`;
        const entry = byAsset.get(key) ?? { tenantId, assetId: v.assetId, ids: new Set<string>() };
        entry.ids.add(v.vulnerabilityId);
        byAsset.set(key, entry);
      }
      // Each finding's integer id by findingKey: the stored ones' first (docs/DESIGN.md §45).
      const findingIds = new Map<string, number>();
      const found = (rows: ExistingFinding[], tenantId: string) => {
        for (const r of rows) findingIds.set(findingKey(tenantId, r.asset_id, r.vulnerability_id), r.id);
      };
      const groups = [...byAsset.values()];
      if (groups.length <= FEW_ASSETS) {
        for (const { tenantId, assetId, ids } of groups)
          found(await existingFindings(tx, tenantId, assetId, [...ids]), tenantId);
      } else {
        const tenants = new Map<string, string[]>();
        for (const g of groups) appendTo(tenants, g.tenantId, g.assetId);
        for (const [tenantId, assetIds] of tenants) {
          const rows = await fromTenant(tx, 'vulnerabilities', tenantId)
            .select(['asset_id', 'vulnerability_id', 'id'])
            .where('vulnerabilities.asset_id', 'in', assetIds)
            .execute();
          found(rows, tenantId);
        }
      }
      // Each record's key, made once: a key is ~200 characters, and making and hashing it again for each of its four
      // uses took 1.1 s of the writing thread's profile of the 1M-finding import.
      const keys = records.map(({ tenantId, vulnerability: v }) => findingKey(tenantId, v.assetId, v.vulnerabilityId));
      const replaced = new Map<string, { tenantId: string; assetId: string; ids: string[] }>();
      for (const [i, { tenantId, vulnerability: v }] of records.entries()) {
        if (!findingIds.has(keys[i] as string)) continue;
        const entry = replaced.get(`${tenantId}\u0000${v.assetId}`) ?? { tenantId, assetId: v.assetId, ids: [] };
        entry.ids.push(v.vulnerabilityId);
        replaced.set(`${tenantId}\u0000${v.assetId}`, entry);
      }
      if (replaced.size > 0) await beforeReplace();
      for (const { tenantId, assetId, ids } of replaced.values())
        await deleteFindingRows(tx, ['vulnerability_packages', 'vulnerability_aliases'], tenantId, assetId, ids);
      // A stored finding keeps its id, which keys its document; a new one takes a new id.
      const added = [...new Set(keys.filter((k) => !findingIds.has(k)))];
      const newIds = await newFindingIds(tx, added.length);
      added.forEach((key, i) => findingIds.set(key, newIds[i] as number));
      const ids = keys.map((key) => findingIds.get(key) as number);
      // What the loaded feeds add (KEV, Exploit-DB), joined by each finding's id and aliases; the finding's own
      // values are kept apart so that a later feed reload starts from them again.
      feedsLoaded ??= hasFindingFeeds(tx);
      const intel = (await feedsLoaded)
        ? await feedIntel(
            tx,
            records.flatMap(({ vulnerability: v, aliases }) => intelKeys(v.vulnerabilityId, aliases)),
          )
        : null;
      const enriched = records.map((record, i) => {
        const own = ownIntel(record.vulnerability);
        const id = ids[i] as number;
        if (intel === null) return { record, own, v: record.vulnerability, id };
        const v = {
          ...record.vulnerability,
          ...intelOf(intel, own, record.vulnerability.vulnerabilityId, record.aliases ?? []),
        };
        return { record, own, v, id };
      });
      // The id column is written for a new finding and kept for a stored one.
      await upsertRows(
        tx,
        'vulnerabilities',
        ['tenant_id', 'asset_id', 'vulnerability_id'],
        enriched.map(({ record, own, v, id }) => findingRow(record, v, own, id)),
        enriched.length,
        ['id'],
      );
      await upsert(
        tx,
        'vulnerability_documents',
        documentKey(dialectOf(tx)),
        enriched.map(({ record, id }) => ({
          tenant_id: record.tenantId,
          finding_id: id,
          doc: findingDocumentBytes(record),
        })),
      );
      const aliases = records.flatMap((record) =>
        findingAliases(record).map((alias) => ({
          tenant_id: record.tenantId,
          asset_id: record.vulnerability.assetId,
          vulnerability_id: record.vulnerability.vulnerabilityId,
          alias,
        })),
      );
      const uniqueAliases = [
        ...new Map(
          aliases.map((a) => [`${a.tenant_id}\u0000${a.asset_id}\u0000${a.vulnerability_id}\u0000${a.alias}`, a]),
        ).values(),
      ];
      await insertRows(
        tx,
        'vulnerability_aliases',
        ['tenant_id', 'asset_id', 'vulnerability_id', 'alias'],
        uniqueAliases.map((a) => [a.tenant_id, a.asset_id, a.vulnerability_id, a.alias]),
        'fail',
      );
      // A duplicate finding in one batch would insert its packages twice; keep the last one's.
      const packages = new Map<string, unknown[]>();
      for (const record of records) {
        const { tenantId, vulnerability: v } = record;
        findingPackages(record).forEach((row, position) =>
          packages.set(`${tenantId}\u0000${v.assetId}\u0000${v.vulnerabilityId}\u0000${position}`, row),
        );
      }
      await insertRows(tx, 'vulnerability_packages', PACKAGE_COLUMNS, [...packages.values()], 'fail');
    },
    risk: (records) =>
      upsert(
        tx,
        'risks',
        ['tenant_id', 'id'],
        records.map(({ tenantId, risk: r }) => ({
          tenant_id: tenantId,
          id: r.id,
          risk_type_id: r.riskTypeId,
          integration_id: r.integrationId,
          primary_asset_id: r.primaryAssetId,
          severity_level: r.severityLevel,
          lifecycle_state: r.lifecycleState,
          resource_type: r.meta?.resourceType ?? null,
          discovered_at: r.discoveredAt,
          score: r.score,
          doc: json(r),
        })),
      ),
  };

  const flush = async <K extends ImportKind>(kind: K): Promise<void> => {
    const records = pending[kind];
    if (records.length === 0) return;
    pending[kind] = [] as RecordsByKind[K][] as (typeof pending)[K];
    await flushers[kind](records);
  };

  /** Writes the buffered assets or findings when one of them is of the asset. */
  const flushFor = async (kind: 'asset' | 'vulnerability', tenantId: string, assetId: string): Promise<void> => {
    const held =
      kind === 'asset'
        ? pending.asset.some((r) => r.tenantId === tenantId && r.asset.id === assetId)
        : pending.vulnerability.some((r) => r.tenantId === tenantId && r.vulnerability.assetId === assetId);
    if (held) await flush(kind);
  };
  const reads = scanReads(tx);

  return {
    async write<K extends ImportKind>(kind: K, record: RecordsByKind[K]): Promise<void> {
      const tenantId = (record as { tenantId: string }).tenantId;
      vexCurrent.delete(tenantId);
      if (kind === 'exemption' || kind === 'assetGroup') touch(tenantId);
      else if (kind === 'asset') touch(tenantId, (record as RecordsByKind['asset']).asset.id);
      else if (kind === 'vulnerability')
        touch(tenantId, (record as RecordsByKind['vulnerability']).vulnerability.assetId);
      else if (kind === 'tenant') written.add(tenantId);
      (pending[kind] as RecordsByKind[K][]).push(record);
      // Tenants first: later kinds are written in their own batches, and nothing depends on write order but counts.
      if (pending[kind].length >= BATCH_ROWS[kind]) await flush(kind);
    },

    async settle(): Promise<RiskDerivation> {
      for (const kind of Object.keys(pending) as ImportKind[]) await flush(kind);
      await options.beforeSettle?.();
      // New findings may be what a stored VEX statement speaks of.
      for (const tenantId of touched.keys()) {
        if (vexCurrent.has(tenantId) || !(await hasVexStatements(tx, tenantId))) continue;
        if ((await rematchVex(tx, tenantId)).changed) touch(tenantId);
      }
      let derivation = NO_DERIVATION;
      for (const [tenantId, scope] of touched) {
        if (scope !== 'all' && scope.size === 0) continue;
        await recomputeDerived(tx, tenantId, scope);
        if (options.deriveRisksAt !== undefined)
          derivation = addDerivations(derivation, await deriveTenantRisks(tx, tenantId, scope, options.deriveRisksAt));
      }
      touched.clear();
      return derivation;
    },

    /** Settles what is buffered, then bumps the data version of every tenant the run wrote to. */
    async finish(): Promise<void> {
      await this.settle();
      for (const tenantId of written) await bumpDataVersion(tx, tenantId);
    },

    // What the run holds of the asset was written when its stored state was first read (storedAsset, storedFindings).
    // The packages and aliases are read by their keys, whose indexes a first import builds at its end: now, then.
    async unchangedFindings(tenantId, assetId, records) {
      await beforeReplace();
      return unchangedFindings(tx, tenantId, assetId, records);
    },
    unchangedAsset: (record) => unchangedAsset(tx, record),

    async assetExists(tenantId: string, assetId: string): Promise<boolean> {
      const row = await fromTenant(tx, 'assets', tenantId)
        .select('assets.id')
        .where('assets.id', '=', assetId)
        .executeTakeFirst();
      return row !== undefined;
    },

    // Every run asks for a tenant's organization before it reads or writes anything of that tenant (the ingest for its
    // one tenant, an import for each tenant at its first record): the run takes its turn with the tenant there.
    async tenantOrganization(tenantId: string): Promise<string | undefined> {
      if (!turns.has(tenantId)) {
        turns.add(tenantId);
        await takeTenantTurn(tx, dialectOf(tx), tenantId, options.onWait);
      }
      return tenantOrganization(tx, tenantId);
    },

    // A read of an asset's stored state first writes what the run holds of that asset: a second report of the same
    // asset in one run builds on what the first wrote, not on what was stored before the run.
    async storedAsset(tenantId, assetId) {
      await flushFor('asset', tenantId, assetId);
      return reads.storedAsset(tenantId, assetId);
    },

    async storedFindings(tenantId, assetId) {
      await flushFor('vulnerability', tenantId, assetId);
      return reads.storedFindings(tenantId, assetId);
    },

    async replaceVexDocument(tenantId, document): Promise<void> {
      await replaceVexDocument(tx, tenantId, document);
      vexCurrent.delete(tenantId);
      touch(tenantId);
    },

    async rematchVex(tenantId) {
      // Statements match stored rows: an image asset and the packages of findings still buffered must be written.
      await flush('asset');
      await flush('vulnerability');
      const result = await rematchVex(tx, tenantId);
      vexCurrent.add(tenantId);
      if (result.changed) touch(tenantId);
      return result.documents;
    },

    async recordChecks(tenantId, assetId, results) {
      const counts = await recordChecks(tx, tenantId, assetId, results);
      if (counts.added + counts.updated + counts.resolved > 0) touch(tenantId, assetId);
      return counts;
    },

    async resolveFindings(tenantId, assetId, source, keep): Promise<number> {
      // Buffered findings are all in `keep`: writing them first changes nothing this deletes.
      await flush('vulnerability');
      const resolved = await resolveFindings(tx, tenantId, assetId, source, keep, beforeReplace);
      if (resolved > 0) {
        vexCurrent.delete(tenantId);
        touch(tenantId, assetId);
      }
      return resolved;
    },
  };
}
