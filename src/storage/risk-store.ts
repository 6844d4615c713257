// The risk operations of the CLI (`secinv risks derive|dismiss|reopen`), each in a transaction of its own that bumps
// the tenant's data version, so cached counts and ETags of its lists move.
import { sql, type Kysely, type Transaction } from 'kysely';
import type { LifecycleState } from '../domain/enums.js';
import { deriveTenantRisks } from './risk-derive.js';
import { setRiskLifecycle } from './risk-lifecycle.js';
import type { Database } from './tables.js';
import type { Dialect } from './types.js';

type Db = Kysely<Database> | Transaction<Database>;

const bumpVersion = (db: Db, tenantId: string) =>
  db
    .updateTable('tenants')
    .set((eb) => ({ data_version: eb('data_version', '+', 1) }))
    .where('tenant_id', '=', tenantId)
    .execute();

/** The risk operations of the CLI, each in a transaction of its own that bumps the tenant's data version. */
export function riskWriteStore(db: Kysely<Database>, dialect: Dialect) {
  return {
    deriveRisks: async (tenantId: string, at: string) => {
      const result = await db.transaction().execute(async (tx) => {
        // As in an import: the statistics of tables this transaction fills are stale (a first derivation starts from
        // an empty risks table), and PostgreSQL would then scan the tenant's risks for every batch of assets.
        if (dialect === 'postgres') await sql`set local enable_seqscan = off`.execute(tx);
        const known = await tx
          .selectFrom('tenants')
          .select('tenant_id')
          .where('tenant_id', '=', tenantId)
          .executeTakeFirst();
        if (!known) return undefined;
        const derived = await deriveTenantRisks(tx, tenantId, 'all', at);
        await bumpVersion(tx, tenantId);
        return derived;
      });
      // Fresh statistics for the risk list's filters and sorts after a bulk change.
      if (result !== undefined && result.added + result.updated + result.removed > 0)
        await sql`analyze risks`.execute(db);
      return result;
    },
    setRiskLifecycle: (tenantId: string, riskId: string, state: LifecycleState, at: string) =>
      db.transaction().execute(async (tx) => {
        const changed = await setRiskLifecycle(tx, tenantId, riskId, state, at);
        if (changed) await bumpVersion(tx, tenantId);
        return changed;
      }),
  };
}
