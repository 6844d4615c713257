// The bulk write: every write of tenant data that an import, an ingest or a scan makes runs here, in one transaction,
// as a pipeline of steps. Before the work: the turn (tx/write.ts). During it, each call of the BulkWriter (writer.ts)
// reads what is stored (stored.ts), compares (compare.ts), writes rows (buffer.ts, rows/; a first import without its
// secondary indexes from its first full batch on, deferred-indexes.ts) and, when asked, derives (derive.ts). After it:
// settle (the rest derived, data versions bumped), deferred indexes built, stale statistics named, commit, statistics
// taken.
// A step that must see every change of a run in its transaction (a change log, an outbox) belongs to settle, before
// the data versions move; the changes come from Touched (touched.ts).
import { sql, type Kysely } from 'kysely';
import { INGEST_CACHE_KIB, SQLITE_CACHE_KIB } from '../db/sqlite.js';
import { analyzeFilled, analyzeTables, staleTables } from '../db/statistics.js';
import type { Database } from '../db/tables.js';
import { holdsClaim } from '../scans/queue.js';
import { bulkTransaction } from '../tx/write.js';
import type { BulkWriteOptions, BulkWriter, Dialect } from '../types.js';
import { deferIndexes, emptyBulkTables } from './deferred-indexes.js';
import { bulkWriter } from './writer.js';

/** Thrown inside a bulk write to roll it back without an error (dry runs). */
class Rollback extends Error {}

/** A scan's write found its claim taken by another process: nothing was written. */
export class ScanClaimLost extends Error {
  override name = 'ScanClaimLost';
  constructor(scanId: string) {
    super(`the claim on scan ${scanId} was lost to another process`);
  }
}

export async function bulkWrite<T>(
  db: Kysely<Database>,
  dialect: Dialect,
  work: (writer: BulkWriter) => Promise<T>,
  options: BulkWriteOptions,
): Promise<T> {
  // A smaller page cache while a bulk write runs, SQLite's index builds and the statistics included: its pages are
  // written once in key order, and a 64 MiB cache full of them was a quarter of the peak RSS of a 200,000-finding
  // ingest, for no measurable speed (docs/DESIGN.md §29, docs/BENCHMARKS.md "Ingest").
  if (dialect === 'sqlite') await sql.raw(`pragma cache_size = -${INGEST_CACHE_KIB}`).execute(db);
  const phase = options.onPhase;
  try {
    let result: T | undefined;
    let stale: string[] = [];
    try {
      await bulkTransaction(
        db,
        dialect,
        async (tx) => {
          // The bulk tables a first import fills: their indexes are built at the end, and on PostgreSQL their
          // statistics are taken before deriving reads them back (src/storage/db/statistics.ts).
          // A scan's claim first: lost to another process (its lease ran out), the scan is that process's to apply.
          if (options.scan !== undefined && !(await holdsClaim(tx, dialect, options.scan)))
            throw new ScanClaimLost(options.scan.scanId);
          const empty = options.dryRun ? [] : await emptyBulkTables(tx);
          const deferred = deferIndexes(tx, dialect, empty);
          const filled: string[] = [];
          const run = bulkWriter(tx, {
            deriveRisksAt: options.deriveRisksAt,
            onWait: options.onWait,
            scan: options.scan,
            cause: options.cause,
            clock: options.clock,
            beforeFullBatch: deferred.drop,
            beforeReplace: deferred.keys,
            beforeDerive: async () => {
              const analysed = await analyzeFilled(
                tx,
                dialect,
                empty.filter((t) => !filled.includes(t)),
              );
              filled.push(...analysed);
            },
          });
          result = await work(run.writer);
          phase?.('read');
          if (options.dryRun) throw new Rollback();
          // Settling reads a finding's aliases by their key (the EPSS of the risk rules).
          await deferred.keys();
          await run.settle();
          phase?.('settled');
          await deferred.rebuild();
          phase?.('indexed');
          // Which tables the run moved by more than a tenth, seen from inside it (src/storage/db/statistics.ts).
          // Those already waiting for their statistics are stale whatever this write did: not counted (§119).
          const known = [...filled, ...(options.staleStatistics?.waiting ?? [])];
          stale = await staleTables(tx, dialect, undefined, known);
        },
        { takeFile: !options.dryRun, onWait: options.onWait },
      );
    } catch (error) {
      if (!(error instanceof Rollback)) throw error;
      return result as T;
    }
    phase?.('committed');
    // Fresh planner statistics for the tables the run changed by more than a tenth (or those tables handed to a caller
    // with more writes queued behind this one, docs/DESIGN.md §113).
    // SQLite reads every index it analyses (1.5 s for 1,150,000 records): sampled statistics (analysis_limit)
    // misjudge the tenant_id prefix every index shares and made the risk list sort 50,000 rows (160 ms) instead of
    // walking its index (1 ms). On PostgreSQL, VACUUM also marks the new rows all-visible, which index-only scans
    // need: a deep page (OFFSET 49,900) went from 124 ms to 17 ms on 100,000 assets.
    if (options.staleStatistics !== undefined) options.staleStatistics.add(stale);
    else {
      await analyzeTables(db, dialect, stale);
      phase?.('analyzed');
    }
    return result as T;
  } finally {
    if (dialect === 'sqlite') await sql.raw(`pragma cache_size = -${SQLITE_CACHE_KIB}`).execute(db);
  }
}
