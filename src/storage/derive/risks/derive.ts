// Risk derivation: reads what the rules look at for each asset (src/domain/risk-engine.ts RiskSubject), runs the rules
// (src/domain/risk-rules.ts) and makes the tenant's derived risks agree with them, keeping each risk's discoveredAt and
// the lifecycle state a user gave it; then sets the riskScore of scanned assets from their OPEN risks (docs/RISKS.md).
// Runs inside the caller's transaction, for some assets of a tenant or all of them, in batches of assets.
import type { Kysely, Transaction } from 'kysely';
import { intelKeys } from '../../../domain/intel.js';
import { citesExploitable, type SubjectFinding } from '../../../domain/risk-engine.js';
import { appendTo, chunks } from '../../../lib/collections.js';
import { forAssetBatches } from '../../db/batches.js';
import { fromTenant } from '../../tx/tenant.js';
import { dialectOf, updateRows, upsertRows } from '../../db/insert-rows.js';
import { sqlDialects } from '../../db/dialect.js';
import { documentOf } from '../../read/vulnerabilities/documents.js';
import { parsed, reachOf, type CitableRow, type RiskAssetRow, type RiskBatch, type RiskWrites } from './compute.js';
import { inlineComputer, threadComputer, type RiskComputer } from './thread.js';
import { risksOfAssets, scoreScannedAssets } from './lifecycle.js';
import { tenantOrganization } from '../../accounts/tenants.js';
import type { Database } from '../../db/tables.js';
import type { RiskDerivation } from '../../types.js';

type Db = Kysely<Database> | Transaction<Database>;
const BATCH = 500;

export const NO_DERIVATION: RiskDerivation = { assets: 0, risks: 0, added: 0, updated: 0, removed: 0 };

export const addDerivations = (a: RiskDerivation, b: RiskDerivation): RiskDerivation => ({
  assets: a.assets + b.assets,
  risks: a.risks + b.risks,
  added: a.added + b.added,
  updated: a.updated + b.updated,
  removed: a.removed + b.removed,
});

/** The production integrations of a tenant: an asset is in production when its integration's environment is. */
async function productionIntegrations(db: Db, tenantId: string): Promise<Set<string>> {
  const rows = await fromTenant(db as Kysely<Database>, 'integrations', tenantId)
    .innerJoin('environments', (j) =>
      j
        .onRef('environments.tenant_id', '=', 'integrations.tenant_id')
        .onRef('environments.environment_id', '=', 'integrations.environment_id'),
    )
    .select('integrations.integration_id')
    .where('environments.is_production', '=', 1)
    .execute();
  return new Set(rows.map((r) => r.integration_id));
}

/**
 * The tenant's assets with at least one finding the risk rules can cite (src/domain/risk-engine.ts isCitable): not
 * exempted, and known-exploited, or exploitable on a publicly exposed or privileged asset. Only their risks can move
 * when nothing but EPSS scores changed: EPSS weighs in the likelihood of a cited finding and decides nothing else.
 * Read from the assets' derived flags, which say the same of their findings (src/domain/derived.ts: `hasKev` and
 * `isExploitable` are whether a finding that is not exempted has the flag) and which the feed load has just brought up
 * to date; reading the findings took 2.9 s on PostgreSQL's 1M findings (docs/DESIGN.md §75). Mirrors isCitable and
 * citesExploitable; test/feeds/risk-scope.test.ts proves they agree.
 */
export async function assetsWithCitableFindings(db: Db, tenantId: string): Promise<Set<string>> {
  const rows = await fromTenant(db as Kysely<Database>, 'assets', tenantId)
    .select('assets.id')
    .where((eb) =>
      eb.or([
        eb('assets.has_kev', '=', 1),
        eb.and([
          eb('assets.is_exploitable', '=', 1),
          eb.or([
            eb('assets.is_publicly_exposed', '=', 1),
            eb('assets.has_admin_privileges', '=', 1),
            eb('assets.has_overly_permissive_privileges', '=', 1),
          ]),
        ]),
      ]),
    )
    .execute();
  return new Set(rows.map((r) => r.id));
}

/** Of the given assets of a tenant, those on which the rules cite exploitable findings (citesExploitable). */
export async function assetsThatReach(db: Db, tenantId: string, assetIds: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const ids of chunks([...assetIds].sort())) {
    const rows = await fromTenant(db as Kysely<Database>, 'assets', tenantId)
      .select(['id', 'is_publicly_exposed', 'has_admin_privileges', 'has_overly_permissive_privileges'])
      .where('assets.id', 'in', ids)
      .execute();
    for (const a of rows) if (citesExploitable(reachOf(a))) out.push(a.id);
  }
  return out;
}

/** The asset columns the rules read, in id order. */
const assetQuery = (db: Db, tenantId: string) =>
  fromTenant(db as Kysely<Database>, 'assets', tenantId)
    .select([
      'id',
      'name',
      'resource_type',
      'region',
      'integration_id',
      'is_publicly_exposed',
      'has_admin_privileges',
      'has_overly_permissive_privileges',
      'n_low_secrets',
      'n_medium_secrets',
      'n_high_secrets',
      'n_critical_secrets',
      'scanned',
      'risk_score',
    ])
    .orderBy('assets.id');

/** Assets in a scope from which the rules run on a thread of their own (docs/DESIGN.md §59): starting one costs more
 * than a few batches' rules. */
const THREAD_FROM = 4 * BATCH;

/** Derives the risks of the given assets of a tenant (or of all its assets) and writes what changed. */
export async function deriveTenantRisks(
  db: Db,
  tenantId: string,
  scope: 'all' | ReadonlySet<string>,
  at: string,
  computer?: RiskComputer,
): Promise<RiskDerivation> {
  const organizationId = await tenantOrganization(db, tenantId);
  if (organizationId === undefined) return NO_DERIVATION;
  const production = [...(await productionIntegrations(db, tenantId))];
  const own = computer === undefined;
  const rules = computer ?? (scope === 'all' || scope.size >= THREAD_FROM ? threadComputer() : inlineComputer);
  let total = NO_DERIVATION;
  try {
    // While the rules run over one batch, the next batch is read and the one before is written: the batches' assets
    // are disjoint, and so are their risks.
    let pending: Promise<[RiskWrites, RiskAssetRow[]]> | null = null;
    const written = async () => {
      if (pending === null) return;
      const [writes, assets] = await pending;
      pending = null;
      total = addDerivations(total, await writeBatch(db, tenantId, assets, writes));
    };
    await forAssetBatches(
      () => assetQuery(db, tenantId),
      scope,
      BATCH,
      async (assets) => {
        const batch = await readBatch(db, { tenantId, organizationId, at, production, assets });
        const next = rules.compute(batch).then((writes): [RiskWrites, RiskAssetRow[]] => [writes, assets]);
        next.catch(() => undefined); // awaited below, after the batch before it is written
        await written();
        pending = next;
      },
    );
    await written();
  } finally {
    if (own) await rules.close();
  }
  if (scope === 'all') {
    // Risks derived for an asset that is no longer in the inventory leave with it.
    const orphans = await fromTenant(db as Kysely<Database>, 'risks', tenantId)
      .select('risks.id')
      .where('risks.derived', '=', 1)
      .where((eb) =>
        eb.not(
          eb.exists(
            eb
              .selectFrom('assets')
              .select('assets.id')
              .whereRef('assets.tenant_id', '=', 'risks.tenant_id')
              .whereRef('assets.id', '=', 'risks.primary_asset_id'),
          ),
        ),
      )
      .execute();
    for (const ids of chunks(orphans.map((o) => o.id)))
      await db.deleteFrom('risks').where('tenant_id', '=', tenantId).where('id', 'in', ids).execute();
    total = { ...total, removed: total.removed + orphans.length };
  }
  return total;
}

/** Reads what the rules look at for a batch of assets. */
async function readBatch(
  db: Db,
  batch: Pick<RiskBatch, 'tenantId' | 'organizationId' | 'at' | 'production' | 'assets'>,
): Promise<RiskBatch> {
  const { tenantId, assets } = batch;
  const assetIds = assets.map((a) => a.id);
  const q = db as Kysely<Database>;
  // Documents as text, as the driver reads them fastest: PostgreSQL sends a bytea as hex, twice its bytes, which
  // node-postgres then decodes (3 s of an EPSS load's 170,000 findings; docs/DESIGN.md §80).
  const dialect = sqlDialects[dialectOf(db)];

  // Secrets live in the asset's document: read it only for assets that have some.
  const withSecrets = assets
    .filter((a) => a.n_low_secrets + a.n_medium_secrets + a.n_high_secrets + a.n_critical_secrets > 0)
    .map((a) => a.id);
  const secrets: RiskBatch['secrets'] = [];
  for (const ids of chunks(withSecrets)) {
    const rows = await fromTenant(q, 'asset_documents', tenantId)
      .select(['asset_id', dialect.document('asset_documents.doc').as('doc')])
      .where('asset_documents.asset_id', 'in', ids)
      .execute();
    for (const r of rows) secrets.push([r.asset_id, r.doc]);
  }

  // Only findings a rule can cite, as src/domain/risk-engine.ts isCitable says: not exempted, and known-exploited, or
  // exploitable on an exposed or privileged asset.
  const exploitableOn = new Set(assets.filter((a) => citesExploitable(reachOf(a))).map((a) => a.id));
  const findings: CitableRow[] = [];
  for (const ids of chunks(assetIds)) {
    const exploitable = ids.filter((id) => exploitableOn.has(id));
    findings.push(
      ...(await fromTenant(q, 'vulnerabilities', tenantId)
        .select([
          'vulnerabilities.asset_id',
          'vulnerabilities.vulnerability_id',
          'vulnerabilities.has_kev',
          'vulnerabilities.has_exploit',
          'vulnerabilities.is_exploitable',
          documentOf(tenantId, 'vulnerabilities', (column) => dialect.document(column)).as('doc'),
          'vulnerabilities.intel',
        ])
        .where('vulnerabilities.asset_id', 'in', ids)
        .where('vulnerabilities.is_exempted', '=', 0)
        .where((eb) =>
          eb.or([
            eb('vulnerabilities.has_kev', '=', 1),
            ...(exploitable.length === 0
              ? []
              : [
                  eb.and([
                    eb('vulnerabilities.is_exploitable', '=', 1),
                    eb('vulnerabilities.asset_id', 'in', exploitable),
                  ]),
                ]),
          ]),
        )
        .execute()),
    );
  }
  const epss = [...(await epssOf(q, tenantId, findings))];

  const checks: RiskBatch['checks'] = [];
  for (const ids of chunks(assetIds)) {
    const rows = await fromTenant(q, 'checks', tenantId)
      .select(['asset_id', 'doc'])
      .where('checks.asset_id', 'in', ids)
      .orderBy('checks.check_id')
      .orderBy('checks.source')
      .execute();
    for (const r of rows) checks.push([r.asset_id, r.doc]);
  }

  const existing: RiskBatch['existing'] = [];
  for (const ids of chunks(assetIds)) {
    const rows = await risksOfAssets(db, tenantId, ids, (risks) =>
      risks
        .select([
          'risks.id',
          'risks.discovered_at',
          'risks.lifecycle_state',
          'risks.integration_id',
          'risks.severity_level',
          'risks.resource_type',
          'risks.score',
          dialect.document('risks.doc').as('doc'),
        ])
        .where('risks.derived', '=', 1),
    );
    for (const { id, ...risk } of rows) existing.push([id, risk]);
  }
  return { ...batch, secrets, findings, epss, checks, existing };
}

/** Writes what the rules made of a batch, then the scanned assets' riskScore from their risks. */
async function writeBatch(
  db: Db,
  tenantId: string,
  assets: readonly RiskAssetRow[],
  writes: RiskWrites,
): Promise<RiskDerivation> {
  const q = db as Kysely<Database>;
  // A new risk takes the state a user gave it before it left, if any (risk_states): rare, so patched here.
  const remembered = new Map<string, string>();
  for (const ids of chunks(writes.inserted.map((r) => r.id))) {
    const rows = await fromTenant(q, 'risk_states', tenantId)
      .select(['risk_id', 'lifecycle_state'])
      .where('risk_states.risk_id', 'in', ids)
      .execute();
    for (const r of rows) remembered.set(r.risk_id, r.lifecycle_state);
  }
  // Both databases' writers take the documents' bytes as the thread returns them (Uint8Arrays).
  const inserted = writes.inserted.map((row) => {
    const state = remembered.get(row.id);
    if (state === undefined) return row;
    const doc = parsed(row.doc);
    doc.lifecycleState = state;
    return { ...row, lifecycle_state: state, doc: Buffer.from(JSON.stringify(doc)) };
  });
  await upsertRows(db, 'risks', ['tenant_id', 'id'], inserted, 200);
  for (const { columns, rows } of writes.updates) await updateRows(db, 'risks', tenantId, ['id'], columns, rows);
  for (const ids of chunks(writes.gone))
    await db.deleteFrom('risks').where('tenant_id', '=', tenantId).where('id', 'in', ids).execute();
  await scoreScannedAssets(
    db,
    tenantId,
    assets.filter((a) => a.scanned === 1),
  );
  const updated = writes.updates.reduce((sum, group) => sum + group.rows.length, 0);
  return {
    assets: assets.length,
    risks: writes.risks,
    added: inserted.length,
    updated,
    removed: writes.gone.length,
  };
}

/** The highest EPSS score of each finding's id and aliases, keyed by asset and vulnerability id. */
async function epssOf(
  db: Kysely<Database>,
  tenantId: string,
  rows: readonly { asset_id: string; vulnerability_id: string }[],
): Promise<Map<string, SubjectFinding['epss']>> {
  const out = new Map<string, SubjectFinding['epss']>();
  if (rows.length === 0) return out;
  const aliases = new Map<string, string[]>();
  for (const ids of chunks([...new Set(rows.map((r) => r.asset_id))])) {
    const found = await fromTenant(db, 'vulnerability_aliases', tenantId)
      .select(['asset_id', 'vulnerability_id', 'alias'])
      .where('vulnerability_aliases.asset_id', 'in', ids)
      .execute();
    for (const a of found) appendTo(aliases, `${a.asset_id}\u0000${a.vulnerability_id}`, a.alias);
  }
  const keysOf = new Map<string, string[]>();
  for (const r of rows) {
    const key = `${r.asset_id}\u0000${r.vulnerability_id}`;
    keysOf.set(key, intelKeys(r.vulnerability_id, aliases.get(key)));
  }
  const scores = new Map<string, { epss: number; percentile: number }>();
  for (const cves of chunks([...new Set([...keysOf.values()].flat())].sort())) {
    const found = await db
      .selectFrom('feed_epss')
      .select(['cve_id', 'epss', 'percentile'])
      .where('cve_id', 'in', cves)
      .execute();
    for (const s of found) scores.set(s.cve_id, { epss: Number(s.epss), percentile: Number(s.percentile) });
  }
  for (const [key, cves] of keysOf) {
    let best: SubjectFinding['epss'] = null;
    for (const cve of cves) {
      const s = scores.get(cve);
      if (s && (best === null || s.epss > best.score)) best = { score: s.epss, percentile: s.percentile, cveId: cve };
    }
    if (best) out.set(key, best);
  }
  return out;
}
