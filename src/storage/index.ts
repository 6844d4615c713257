// Opens a database and returns the one implementation of the storage interface (src/storage/types.ts) for it, Kysely
// over SQLite or PostgreSQL; nothing outside src/storage/ sees SQL.
import { sql } from 'kysely';
import { UnavailableError } from '../domain/errors.js';
import { assetBatchStore } from './read/assets/batches.js';
import { assetStore } from './read/assets/list.js';
import {
  connect,
  defaultConnectOptions,
  INGEST_CACHE_KIB,
  SQLITE_CACHE_KIB,
  type ConnectOptions,
} from './db/connect.js';
import { sqlDialects } from './db/dialect.js';
import { feedStore } from './feeds/load.js';
import { ingestWriter } from './write/writer.js';
import { keyStore } from './accounts/keys.js';
import { riskWriteStore } from './derive/risks/store.js';
import { tenantStore } from './accounts/tenants.js';
import { riskStore } from './read/risks.js';
import { PACKAGE_WALK_ROWS, vulnerabilityStore } from './read/vulnerabilities/list.js';
import { bulkTransaction } from './tx/write.js';
import { singleStatementReader } from './tx/gathered-reads.js';
import { tenantReader } from './tx/read.js';
import { isBusy } from './tx/journal.js';
import { deferIndexes, emptyBulkTables } from './write/deferred-indexes.js';
import { analyzeFilled, analyzeTables, staleTables } from './db/statistics.js';
import type { WriteRunOptions, IngestWriter, Storage } from './types.js';

export type * from './types.js';
export type { ConnectOptions } from './db/connect.js';
export type { WaitReason } from './types.js';
export { NoInventoryError } from './db/connect.js';
export { displayDatabaseUrl, parseDatabaseUrl } from './db/url.js';
export { NO_DERIVATION } from './derive/risks/derive.js';

/** Thrown inside an ingest to roll it back without an error (dry runs). */
class Rollback extends Error {}

// SQLSTATE classes and codes that mean "the database cannot answer now", not "the request is wrong".
const UNAVAILABLE_SQLSTATES = new Set([
  '57014',
  '57P01',
  '57P02',
  '57P03',
  '53300',
  '53400',
  '40001',
  '40P01',
  '55P03',
]);
const UNAVAILABLE_ERRNOS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'SQLITE_BUSY',
  'SQLITE_LOCKED',
]);

/**
 * True for failures of the database connection or capacity (answered 503), as opposed to bugs (500). pg's messages:
 * "timeout exceeded when trying to connect" is the pool's queue wait running out, "timeout expired" a new connection
 * that did not open within the connect timeout.
 */
export function isUnavailable(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown };
  const code = typeof e?.code === 'string' ? e.code : '';
  if (UNAVAILABLE_SQLSTATES.has(code) || code.startsWith('08') || UNAVAILABLE_ERRNOS.has(code)) return true;
  const message = typeof e?.message === 'string' ? e.message : '';
  return /timeout exceeded when trying to connect|^timeout expired$|Connection terminated|Client has encountered a connection error|connection is not open|terminating connection|driver has already been destroyed|pool after calling end|^Query read timeout$|not queryable/i.test(
    message,
  );
}

/**
 * What an unavailable database means to the one who ran the command (the API answers its own 503 body): a write beside
 * another on SQLite, or two writes that PostgreSQL could not both let through, says to run it again.
 */
export function unavailableMessage(error: unknown): string {
  const code = (error as { code?: unknown })?.code;
  if (isBusy(error) || code === 'SQLITE_LOCKED')
    return 'the database is busy: another process is writing it (retry when that write ends)';
  if (code === '40P01' || code === '40001')
    return 'this write conflicted with another that ran at the same time, and nothing was written: run it again';
  return 'the database is unavailable';
}

/** Wraps every function of an object so database unavailability surfaces as UnavailableError. */
function guarded<T extends Record<string, unknown>>(methods: T): T {
  const out: Record<string, unknown> = {};
  for (const [name, fn] of Object.entries(methods)) {
    out[name] =
      typeof fn !== 'function'
        ? fn
        : async (...args: unknown[]) => {
            try {
              return await (fn as (...a: unknown[]) => Promise<unknown>)(...args);
            } catch (error) {
              if (isUnavailable(error)) throw new UnavailableError(unavailableMessage(error), { cause: error });
              throw error;
            }
          };
  }
  return out as T;
}

export async function openStorage(url: string, options: Partial<ConnectOptions> = {}): Promise<Storage> {
  const { db, dialect, pool } = await connect(url, { ...defaultConnectOptions, ...options });
  const read = tenantReader(db, dialect);

  const storage: Omit<Storage, 'dialect' | 'poolStats'> = guarded({
    ...keyStore(db, dialect),
    ...tenantStore(db, dialect),
    ...assetStore(
      { read, readOne: singleStatementReader(db, dialect) },
      sqlDialects[dialect],
      options.countColumnsMaxRows ?? defaultConnectOptions.countColumnsMaxRows,
    ),
    ...assetBatchStore(read, sqlDialects[dialect]),
    ...riskStore(read),
    // PostgreSQL's planner walks the sort index by itself when the matches are dense (22 ms for openssl on 1M
    // findings, against 34 ms through the walk's subquery): the walk is SQLite's.
    ...vulnerabilityStore(
      read,
      sqlDialects[dialect],
      options.packageWalkRows ?? (dialect === 'sqlite' ? PACKAGE_WALK_ROWS : 0),
    ),
    ...feedStore(db, dialect),
    ...riskWriteStore(db, dialect),

    // Made once per database by migration 0003.
    async cursorKey(): Promise<Buffer> {
      const row = await db
        .selectFrom('server_secrets')
        .select('value')
        .where('name', '=', 'cursor_key')
        .executeTakeFirstOrThrow();
      return Buffer.from(row.value, 'hex');
    },

    async ingest<T>(work: (writer: IngestWriter) => Promise<T>, ingestOptions: WriteRunOptions): Promise<T> {
      // A smaller page cache while an ingest runs, SQLite's index builds and the statistics included: its pages are
      // written once in key order, and a 64 MiB cache full of them was a quarter of the peak RSS of a 200,000-finding
      // ingest, for no measurable speed (docs/DESIGN.md §29); 4 MiB against 16 MiB took 20 MB more off that peak and
      // changed neither that ingest's time nor the 1M-finding import's (docs/BENCHMARKS.md, "Ingest").
      if (dialect === 'sqlite') await sql.raw(`pragma cache_size = -${INGEST_CACHE_KIB}`).execute(db);
      const phase = ingestOptions.onPhase;
      try {
        let result: T | undefined;
        let stale: string[] = [];
        try {
          await bulkTransaction(
            db,
            dialect,
            async (tx) => {
              // The bulk tables a first import fills: their indexes are built at the end, and on PostgreSQL their
              // statistics are taken before settling reads them back (src/storage/db/statistics.ts).
              const empty = ingestOptions.dryRun ? [] : await emptyBulkTables(tx);
              const deferred = await deferIndexes(tx, dialect, empty);
              const filled: string[] = [];
              const writer = ingestWriter(tx, {
                deriveRisksAt: ingestOptions.deriveRisksAt,
                onWait: ingestOptions.onWait,
                beforeReplace: deferred.keys,
                beforeSettle: async () => {
                  const analysed = await analyzeFilled(
                    tx,
                    dialect,
                    empty.filter((t) => !filled.includes(t)),
                  );
                  filled.push(...analysed);
                },
              });
              result = await work(writer);
              phase?.('read');
              if (ingestOptions.dryRun) throw new Rollback();
              // Settling reads a finding's aliases by their key (the EPSS of the risk rules).
              await deferred.keys();
              await writer.finish();
              phase?.('settled');
              await deferred.rebuild();
              phase?.('indexed');
              // Which tables the run moved by more than a tenth, seen from inside it (src/storage/db/statistics.ts).
              stale = await staleTables(tx, dialect, undefined, filled);
            },
            { takeFile: !ingestOptions.dryRun, onWait: ingestOptions.onWait },
          );
        } catch (error) {
          if (!(error instanceof Rollback)) throw error;
          return result as T;
        }
        phase?.('committed');
        // Fresh planner statistics for the tables the run changed by more than a tenth.
        // SQLite reads every index it analyses (1.5 s for 1,150,000 records): sampled statistics (analysis_limit)
        // misjudge the tenant_id prefix every index shares and made the risk list sort 50,000 rows (160 ms) instead of
        // walking its index (1 ms). On PostgreSQL, VACUUM also marks the new rows all-visible, which index-only scans
        // need: a deep page (OFFSET 49,900) went from 124 ms to 17 ms on 100,000 assets.
        await analyzeTables(db, dialect, stale);
        phase?.('analyzed');
        return result as T;
      } finally {
        if (dialect === 'sqlite') await sql.raw(`pragma cache_size = -${SQLITE_CACHE_KIB}`).execute(db);
      }
    },

    async ping(): Promise<void> {
      await sql`select 1`.execute(db);
    },

    async close(): Promise<void> {
      await db.destroy();
    },
  });
  return {
    dialect,
    ...storage,
    poolStats: () => pool && { total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount },
  };
}
