// Retention of ended scans (pipeline.md §2, SECINV_SCAN_RETENTION_DAYS): a server's scan runner deletes the records of
// scans that ended before a cutoff, tenant by tenant, in batches of their own transaction each, so that the writes
// beside it (an upload's queueing, a scan being applied) wait at most one batch. Several servers of one PostgreSQL
// database may prune at once: each batch skips the rows another one holds, and what is already gone is not found again.
import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.js';
import { pruneEachTenant } from '../tx/prune.js';
import { writeTransaction } from '../tx/write.js';
import type { Dialect, PruneOptions } from '../types.js';

export function scanRetention(db: Kysely<Database>, dialect: Dialect) {
  /** Deletes up to `batch` of the tenant's scans that ended before `cutoff`; how many it deleted. */
  const pruneBatch = (tenantId: string, cutoff: string, batch: number): Promise<number> =>
    writeTransaction(db, dialect, async (tx) => {
      // A scan is submitted before it ends, so the range of the (tenant, submitted_at) index holds every one to delete.
      // The batch is read first, then deleted by its ids: a LIMIT inside the DELETE may be evaluated more than once
      // by PostgreSQL's plan, each time finding other rows, and delete more than a batch.
      const ended = await tx
        .selectFrom('scans')
        .select('id')
        .where('tenant_id', '=', tenantId)
        .where('submitted_at', '<', cutoff)
        .where('finished_at', '<', cutoff)
        .where('status', 'in', ['succeeded', 'failed'])
        .orderBy('submitted_at')
        .limit(batch)
        .$if(dialect === 'postgres', (select) => select.forUpdate().skipLocked())
        .execute();
      if (ended.length === 0) return 0;
      const result = await tx
        .deleteFrom('scans')
        .where('tenant_id', '=', tenantId)
        .where(
          'id',
          'in',
          ended.map((row) => row.id),
        )
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    });

  return {
    /**
     * Deletes every scan that ended (succeeded or failed) before `cutoff`, `batch` per statement, until `stopped` says
     * so between two batches; how many it deleted.
     */
    pruneScans: (cutoff: string, options: PruneOptions = {}): Promise<number> =>
      pruneEachTenant(db, (tenantId, batch) => pruneBatch(tenantId, cutoff, batch), options),
  };
}
