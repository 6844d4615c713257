// The risk operations of the CLI (`secinv risks derive|dismiss|reopen`), each in a transaction of its own that bumps
// the tenant's data version, so cached counts and ETags of its lists move.
import type { Kysely, Transaction } from 'kysely';
import type { LifecycleState } from '../domain/enums.js';
import { deriveTenantRisks } from './risk-derive.js';
import { setRiskLifecycle } from './risk-lifecycle.js';
import type { Database } from './tables.js';

type Db = Kysely<Database> | Transaction<Database>;

const bumpVersion = (db: Db, tenantId: string) =>
  db
    .updateTable('tenants')
    .set((eb) => ({ data_version: eb('data_version', '+', 1) }))
    .where('tenant_id', '=', tenantId)
    .execute();

/** The risk operations of the CLI, each in a transaction of its own that bumps the tenant's data version. */
export function riskWriteStore(db: Kysely<Database>) {
  return {
    deriveRisks: (tenantId: string, at: string) =>
      db.transaction().execute(async (tx) => {
        const known = await tx
          .selectFrom('tenants')
          .select('tenant_id')
          .where('tenant_id', '=', tenantId)
          .executeTakeFirst();
        if (!known) return undefined;
        const result = await deriveTenantRisks(tx, tenantId, 'all', at);
        await bumpVersion(tx, tenantId);
        return result;
      }),
    setRiskLifecycle: (tenantId: string, riskId: string, state: LifecycleState, at: string) =>
      db.transaction().execute(async (tx) => {
        const changed = await setRiskLifecycle(tx, tenantId, riskId, state, at);
        if (changed) await bumpVersion(tx, tenantId);
        return changed;
      }),
  };
}
