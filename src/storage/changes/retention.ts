// Retention of the change log (pipeline.md §4, SECINV_CHANGES_RETENTION_DAYS, docs/DESIGN.md §101): a server's scan
// runner deletes each tenant's oldest changes, those committed before a cutoff, in batches of their own transaction
// each, and raises the tenant's `changes_pruned_seq` to the last position it deleted in the same transaction, so that a
// read sees the log and the bound together: a cursor at that position or after it misses nothing, one before it is
// answered 410. Only a prefix of the log is ever deleted, so what is left is a suffix and every cursor is either
// complete or gone.
import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/tables.js';
import { pruneEachTenant } from '../tx/prune.js';
import { CHANGES_PRUNE_CLASS, tryTurn } from '../tx/turns.js';
import { writeTransaction } from '../tx/write.js';
import type { Dialect, PruneOptions } from '../types.js';

export function changeRetention(db: Kysely<Database>, dialect: Dialect) {
  /** Deletes up to `batch` of the tenant's oldest changes committed before `cutoff`; how many it deleted. */
  const pruneBatch = (tenantId: string, cutoff: string, batch: number): Promise<number> =>
    writeTransaction(db, dialect, async (tx) => {
      // PostgreSQL: one server at a time prunes a tenant, so that each batch starts where the last one ended and the
      // bound moves with the prefix. A server that finds another pruning it leaves the tenant to that one, which goes
      // on until none is left, rather than wait: the runner that prunes also applies scans and expiries, which must
      // not stand still behind a slow or frozen process's batch. Writers never take this lock, nor touch old changes
      // (they append after the head): the one row both lock is the tenant's, which the batch updates last, just
      // before its commit. SQLite: the write lock, for one batch.
      if (
        dialect === 'postgres' &&
        !(await tryTurn(tx, 'exclusive', sql`${CHANGES_PRUNE_CLASS}::int, hashtext(${tenantId})`))
      )
        return 0;
      // The oldest by position (the primary key's order). A change's time is its write's clock, which another server's
      // may set a little behind: the batch ends at the first change not older than the cutoff, never skipping one.
      const oldest = await tx
        .selectFrom('changes')
        .select(['seq', 'at'])
        .where('tenant_id', '=', tenantId)
        .orderBy('seq')
        .limit(batch)
        .execute();
      const old = oldest.findIndex((row) => row.at >= cutoff);
      const count = old === -1 ? oldest.length : old;
      if (count === 0) return 0;
      const first = Number(oldest[0]!.seq);
      const last = Number(oldest[count - 1]!.seq);
      const result = await tx
        .deleteFrom('changes')
        .where('tenant_id', '=', tenantId)
        .where('seq', '>=', first)
        .where('seq', '<=', last)
        .executeTakeFirst();
      // The bound is the last position deleted (a cursor there, "after it", is complete), never lowered. The data
      // version moves: a kept answer or an ETag of a page read from a cursor now gone must not be served again.
      await tx
        .updateTable('tenants')
        .set((eb) => ({ changes_pruned_seq: last, data_version: eb('data_version', '+', 1) }))
        .where('tenant_id', '=', tenantId)
        .where('changes_pruned_seq', '<', last)
        .execute();
      return Number(result.numDeletedRows);
    });

  return {
    /**
     * Deletes every tenant's changes committed before `cutoff`, oldest first, `batch` per transaction, until `stopped`
     * says so between two batches; how many it deleted.
     */
    pruneChanges: (cutoff: string, options: PruneOptions = {}): Promise<number> =>
      pruneEachTenant(db, (tenantId, batch) => pruneBatch(tenantId, cutoff, batch), options),
  };
}
