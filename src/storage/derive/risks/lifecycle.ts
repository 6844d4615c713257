// A risk's lifecycle (`secinv risks dismiss|reopen`): the state is set on the risk and remembered by risk id, so a
// derived risk that leaves the inventory and comes back keeps it; and the riskScore of scanned assets, which follows
// the scores of their OPEN risks (docs/RISKS.md).
import { sql, type Kysely, type SelectQueryBuilder, type Transaction } from 'kysely';
import type { LifecycleState } from '../../../domain/enums.js';
import { dialectOf } from '../../db/insert-rows.js';
import { chunks } from '../../../lib/collections.js';
import { fromTenant } from '../../tx/tenant.js';
import type { Database } from '../../db/tables.js';

type Db = Kysely<Database> | Transaction<Database>;

/**
 * Sets a risk's lifecycle state (any risk of the tenant, derived or imported) and remembers it by id, with the time
 * its dismissal ends (`until`; null: never, and always for OPEN); updates the riskScore of its primary asset when a
 * scanner made that asset. False, and nothing changed, for an unknown id.
 */
export async function setRiskLifecycle(
  db: Db,
  tenantId: string,
  riskId: string,
  state: LifecycleState,
  at: string,
  until: string | null = null,
): Promise<boolean> {
  const q = db as Kysely<Database>;
  const risk = await fromTenant(q, 'risks', tenantId)
    .select(['doc', 'primary_asset_id'])
    .where('risks.id', '=', riskId)
    .executeTakeFirst();
  if (!risk) return false;
  const ends = state === 'OPEN' ? null : until;
  const doc = JSON.parse(Buffer.from(risk.doc).toString('utf8')) as Record<string, unknown>;
  await db
    .updateTable('risks')
    .set({ lifecycle_state: state, doc: Buffer.from(JSON.stringify({ ...doc, lifecycleState: state })) })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', riskId)
    .execute();
  await db
    .insertInto('risk_states')
    .values({ tenant_id: tenantId, risk_id: riskId, lifecycle_state: state, changed_at: at, until: ends })
    .onConflict((oc) =>
      oc.columns(['tenant_id', 'risk_id']).doUpdateSet({ lifecycle_state: state, changed_at: at, until: ends }),
    )
    .execute();
  if (risk.primary_asset_id !== null) {
    const asset = await fromTenant(q, 'assets', tenantId)
      .select(['id', 'risk_score'])
      .where('assets.id', '=', risk.primary_asset_id)
      .where('assets.scanned', '=', 1)
      .executeTakeFirst();
    if (asset) await scoreScannedAssets(db, tenantId, [asset]);
  }
  return true;
}

/**
 * The tenant's risks whose primary asset is one of `assetIds` (at most a chunk), as `select` shapes them. PostgreSQL
 * probes the primary-asset index once per asset: a derivation's risks are written inside its own transaction, where
 * autoanalyze does not see them, and without statistics the planner took an `in` list of 500 assets to match every
 * risk. It then read all of the tenant's risks through another index for each batch (340 ms a batch once a KEV load
 * had derived 42,000; a first EPSS load spent 8.4 s there).
 */
export async function risksOfAssets<R>(
  db: Db,
  tenantId: string,
  assetIds: readonly string[],
  select: (q: SelectQueryBuilder<Database, 'risks', object>) => SelectQueryBuilder<Database, 'risks', R>,
): Promise<R[]> {
  const risks = fromTenant(db as Kysely<Database>, 'risks', tenantId);
  if (dialectOf(db) === 'sqlite') return select(risks.where('risks.primary_asset_id', 'in', assetIds)).execute();
  // An ORDER BY on the tenant keeps the planner from flattening the lateral subquery into a join, which it then planned
  // as above; Citus refuses `offset 0` there (see keyProbe in src/storage/read/vulnerabilities/documents.ts).
  const probe = select(risks.where('risks.primary_asset_id', '=', sql.ref<string>('a.id'))).orderBy('risks.tenant_id');
  const { rows } = await sql<R>`select r.* from unnest(cast(${assetIds} as text[])) as a(id)
    cross join lateral (${probe}) as r`.execute(db);
  return rows;
}

/** A scanned asset's riskScore is the highest score of its OPEN risks, 0 without any (docs/RISKS.md). */
export async function scoreScannedAssets(
  db: Db,
  tenantId: string,
  assets: readonly { id: string; risk_score: number | null }[],
): Promise<void> {
  const q = db as Kysely<Database>;
  const highest = new Map<string, number>();
  for (const ids of chunks(assets.map((a) => a.id))) {
    const rows = await risksOfAssets(db, tenantId, ids, (risks) =>
      risks
        .select((eb) => ['risks.primary_asset_id', eb.fn.max('risks.score').as('top')])
        .where('risks.lifecycle_state', '=', 'OPEN')
        // With the tenant, which the probe fixes: Citus pushes a lateral GROUP BY down only with its distribution column.
        .groupBy(['risks.tenant_id', 'risks.primary_asset_id']),
    );
    for (const r of rows) if (r.primary_asset_id !== null) highest.set(r.primary_asset_id, Number(r.top));
  }
  const changed = assets.filter((a) => a.risk_score !== (highest.get(a.id) ?? 0));
  for (const ids of chunks(changed.map((a) => a.id))) {
    const rows = await fromTenant(q, 'asset_documents', tenantId)
      .select(['asset_id', 'doc'])
      .where('asset_documents.asset_id', 'in', ids)
      .execute();
    for (const r of rows) {
      const riskScore = highest.get(r.asset_id) ?? 0;
      const doc = JSON.parse(Buffer.from(r.doc).toString('utf8')) as Record<string, unknown>;
      await db
        .updateTable('assets')
        .set({ risk_score: riskScore })
        .where('tenant_id', '=', tenantId)
        .where('id', '=', r.asset_id)
        .execute();
      await db
        .updateTable('asset_documents')
        .set({ doc: Buffer.from(JSON.stringify({ ...doc, riskScore })) })
        .where('tenant_id', '=', tenantId)
        .where('asset_id', '=', r.asset_id)
        .execute();
    }
  }
}
