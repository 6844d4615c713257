// Opens a database and returns the one implementation of the storage interface (src/storage/types.ts) for it, Kysely
// over SQLite or PostgreSQL; nothing outside src/storage/ sees SQL.
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { parseDatabaseUrl } from './db/url.js';
import { keyStore } from './accounts/keys.js';
import { tenantStore } from './accounts/tenants.js';
import { connect } from './db/connect.js';
import { defaultConnectOptions, type ConnectOptions } from './db/connection.js';
import { sqlDialects } from './db/dialect.js';
import { openSqliteReader } from './db/sqlite.js';
import { guarded } from './db/unavailable.js';
import { riskWriteStore } from './derive/risks/store.js';
import { expiryStore } from './derive/expiry.js';
import { feedStore } from './feeds/load.js';
import { changeStore } from './changes/read.js';
import { snapshotHolder, snapshotStore } from './changes/snapshots.js';
import { changeRetention } from './changes/retention.js';
import { assetBatchStore } from './read/assets/batches.js';
import { assetStore } from './read/assets/list.js';
import { riskStore } from './read/risks.js';
import { PACKAGE_WALK_ROWS, vulnerabilityStore } from './read/vulnerabilities/list.js';
import { singleStatementReader } from './tx/gathered-reads.js';
import { tenantReader } from './tx/read.js';
import { scanQueue, type BodyPlace } from './scans/queue.js';
import { scanRecordReads, scanRecordWrites } from './scans/records.js';
import { scanRetention } from './scans/retention.js';
import { checkpoint } from './db/journal.js';
import { analyzeTables } from './db/statistics.js';
import { bulkWrite } from './write/pipeline.js';
import { dueBoundaryStore, metricStore } from './remediation/metrics.js';
import { slaStore } from './remediation/sla.js';
import { webhookDeliveries } from './webhooks/deliveries.js';
import { webhookEndpoints } from './webhooks/endpoints.js';
import type { Storage } from './types.js';

export type * from './types.js';
export type { ConnectOptions } from './db/connection.js';
export { NoInventoryError } from './db/connection.js';
export { displayDatabaseUrl, parseDatabaseUrl } from './db/url.js';
export { MAX_SCAN_ATTEMPTS } from './scans/queue.js';
export { ScanClaimLost } from './write/pipeline.js';
export { NO_DERIVATION } from './derive/risks/derive.js';
export { isUnavailable, unavailableMessage } from './db/unavailable.js';

/**
 * Where uploaded scans' bytes wait (docs/DESIGN.md §97): PostgreSQL's own table, which every server process of the
 * database reads; for SQLite a folder beside its file (`secinv.db` → `secinv.db-scans/`), or a temporary one in memory.
 */
function bodyPlace(url: string): BodyPlace {
  const location = parseDatabaseUrl(url);
  if (location.dialect === 'postgres') return { kind: 'table' };
  if (location.path === ':memory:') return { kind: 'folder', folder: join(tmpdir(), `secinv-scans-${process.pid}`) };
  return { kind: 'folder', folder: `${location.path}-scans` };
}

/** Exports a SQLite server streams at once, each on a read-only connection of its own. */
const SQLITE_SNAPSHOTS = 16;

export async function openStorage(url: string, options: Partial<ConnectOptions> = {}): Promise<Storage> {
  const settings = { ...defaultConnectOptions, ...options };
  const { db, dialect, pool } = await connect(url, settings);
  const read = tenantReader(db, dialect);
  const location = parseDatabaseUrl(url);
  const packageWalkRows = options.packageWalkRows ?? (dialect === 'sqlite' ? PACKAGE_WALK_ROWS : 0);

  // Its two functions that are not promises stay outside `guarded`, which makes every function async.
  const { scanBody, scanApplied, ...queue } = scanQueue(db, dialect, bodyPlace(url));
  const storage: Omit<Storage, 'dialect' | 'poolStats' | 'scanBody' | 'scanApplied'> = guarded({
    ...keyStore(db, dialect),
    ...tenantStore(db, dialect),
    ...assetStore(
      { read, readOne: singleStatementReader(db, dialect) },
      sqlDialects[dialect],
      options.countColumnsMaxRows ?? defaultConnectOptions.countColumnsMaxRows,
    ),
    ...assetBatchStore(read, sqlDialects[dialect]),
    ...riskStore(read),
    ...changeStore(read, sqlDialects[dialect]),
    // PostgreSQL's planner walks the sort index by itself when the matches are dense (22 ms for openssl on 1M
    // findings, against 34 ms through the walk's subquery): the walk is SQLite's.
    ...vulnerabilityStore(read, sqlDialects[dialect], packageWalkRows),
    ...snapshotStore({
      holder: snapshotHolder(dialect === 'postgres' ? read : undefined, () =>
        location.dialect === 'sqlite' ? openSqliteReader(location.path, settings) : undefined,
      ),
      shared: read,
      held: dialect === 'postgres' ? Math.max(1, Math.floor(settings.poolMax / 2)) : SQLITE_SNAPSHOTS,
      dialect: sqlDialects[dialect],
      packageWalkRows,
    }),
    ...feedStore(db, dialect),
    ...riskWriteStore(db, dialect),
    ...expiryStore(db, dialect),
    ...scanRecordReads(read),
    ...scanRecordWrites(db, dialect),
    ...queue,
    ...scanRetention(db, dialect),
    ...changeRetention(db, dialect),
    ...webhookEndpoints(db, dialect),
    ...webhookDeliveries(db, dialect),
    ...slaStore(db, dialect),
    ...metricStore(read),
    ...dueBoundaryStore(read),

    // Made once per database by migration 0003.
    async cursorKey(): Promise<Buffer> {
      const row = await db
        .selectFrom('server_secrets')
        .select('value')
        .where('name', '=', 'cursor_key')
        .executeTakeFirstOrThrow();
      return Buffer.from(row.value, 'hex');
    },

    bulkWrite: (work, options) => bulkWrite(db, dialect, work, options),
    analyzeTables: (tables) => analyzeTables(db, dialect, tables),
    checkpoint: () => checkpoint(db, dialect),

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
    scanBody,
    scanApplied,
    poolStats: () => pool && { total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount },
  };
}
