// The write-rows step for findings: one batch of finding records becomes their rows, documents, aliases and packages.
// A stored finding keeps its integer id (which keys its document, docs/DESIGN.md §45) and has its packages and aliases
// replaced whole; a new one takes a new id. What the loaded feeds add (KEV, Exploit-DB) is joined here by each
// finding's id and aliases; the finding's own values are kept apart so that a later feed reload starts from them again.
import type { Transaction } from 'kysely';
import type { RecordsByKind } from '../../../domain/records.js';
import { intelKeys, ownIntel } from '../../../domain/intel.js';
import { slaByLevel } from '../../../domain/remediation.js';
import { tenantSla } from '../../accounts/tenants.js';
import { appendTo } from '../../../lib/collections.js';
import type { Database } from '../../db/tables.js';
import { dialectOf, insertRows, upsertRows } from '../../db/insert-rows.js';
import { feedIntel, hasFindingFeeds, intelOf } from '../../feeds/intel.js';
import { documentKey } from '../../read/vulnerabilities/documents.js';
import { fromTenant } from '../../tx/tenant.js';
import { deleteFindingRows, existingFindings, newFindingIds, type ExistingFinding } from '../stored.js';
import { findingAliases, findingDocumentBytes, findingPackages, findingRow, PACKAGE_COLUMNS } from './findings.js';
import { upsert } from './inventory.js';

const findingKey = (tenantId: string, assetId: string, vulnerabilityId: string): string =>
  `${tenantId}\u0000${assetId}\u0000${vulnerabilityId}`;

/** Up to this many assets in a batch, existing findings are looked up per asset (see stored ids below). */
const FEW_ASSETS = 8;

/**
 * The writer of finding batches of one run. `beforeReplace` runs before rows of a finding's packages or aliases are
 * deleted by key (a first import builds those key indexes at its end, src/storage/write/deferred-indexes.ts).
 */
export function findingBatchWriter(
  tx: Transaction<Database>,
  beforeReplace: () => Promise<void>,
): (records: RecordsByKind['vulnerability'][]) => Promise<void> {
  let feedsLoaded: Promise<boolean> | undefined;
  /** Each tenant's SLA days by severity value, read once per run. */
  const slas = new Map<string, Promise<(number | undefined)[]>>();
  const slaOfTenant = (tenantId: string) => {
    let sla = slas.get(tenantId);
    if (sla === undefined) slas.set(tenantId, (sla = tenantSla(tx, tenantId).then(slaByLevel)));
    return sla;
  };

  /**
   * Each stored finding's id by findingKey. Read by index, two ways: a batch of a few assets (a scan: one asset, many
   * findings) asks per asset for the batch's own vulnerability ids, so an asset with many findings is not read whole
   * for every batch; a batch of many assets (an import: few findings each) asks for all their findings at once. Asking
   * for both lists at once lets PostgreSQL probe every (vulnerability, asset) pair through the vulnerability-id index
   * (0.45 s per batch of 800 on 1M findings); a fresh import then deletes nothing.
   */
  const storedIds = async (records: RecordsByKind['vulnerability'][]): Promise<Map<string, number>> => {
    const byAsset = new Map<string, { tenantId: string; assetId: string; ids: Set<string> }>();
    for (const { tenantId, vulnerability: v } of records) {
      const key = `${tenantId}\u0000${v.assetId}`;
      const entry = byAsset.get(key) ?? { tenantId, assetId: v.assetId, ids: new Set<string>() };
      entry.ids.add(v.vulnerabilityId);
      byAsset.set(key, entry);
    }
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
    return findingIds;
  };

  return async (records) => {
    const findingIds = await storedIds(records);
    // Each record's key, made once: a key is ~200 characters, and making and hashing it again for each of its four
    // uses took 1.1 s of the writing thread's profile of the 1M-finding import.
    const keys = records.map(({ tenantId, vulnerability: v }) => findingKey(tenantId, v.assetId, v.vulnerabilityId));
    // A finding's packages are replaced whole, so the packages of findings that already exist are deleted first.
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
    const added = [...new Set(keys.filter((k) => !findingIds.has(k)))];
    const newIds = await newFindingIds(tx, added.length);
    added.forEach((key, i) => findingIds.set(key, newIds[i] as number));
    const ids = keys.map((key) => findingIds.get(key) as number);
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
    const tenantSlas = new Map<string, (number | undefined)[]>();
    for (const { tenantId } of records)
      if (!tenantSlas.has(tenantId)) tenantSlas.set(tenantId, await slaOfTenant(tenantId));
    // The id column is written for a new finding and kept for a stored one.
    await upsertRows(
      tx,
      'vulnerabilities',
      ['tenant_id', 'asset_id', 'vulnerability_id'],
      enriched.map(({ record, own, v, id }) => findingRow(record, v, own, id, tenantSlas.get(record.tenantId)!)),
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
  };
}
