// Retention's deletions (scans, the change log): tenant by tenant, in batches of a transaction each, so that the writes
// beside them wait for one batch at most.
import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.js';
import type { PruneOptions } from '../types.js';

/** Rows deleted per batch. */
export const PRUNE_BATCH = 1000;

/**
 * Runs `pruneBatch` for each tenant, in the order of their ids, until it deletes fewer than a batch, or `stopped`
 * says so between two batches; how many rows it deleted.
 */
export async function pruneEachTenant(
  db: Kysely<Database>,
  pruneBatch: (tenantId: string, batch: number) => Promise<number>,
  { batch = PRUNE_BATCH, stopped = () => false }: PruneOptions,
): Promise<number> {
  const tenants = await db.selectFrom('tenants').select('tenant_id').orderBy('tenant_id').execute();
  let deleted = 0;
  for (const { tenant_id: tenantId } of tenants) {
    for (;;) {
      if (stopped()) return deleted;
      const n = await pruneBatch(tenantId, batch);
      deleted += n;
      // Fewer than a batch: none left to delete, or the rest held by another server deleting it.
      if (n < batch) break;
    }
  }
  return deleted;
}
