// Opening a SQLite file: its folder, WAL (waiting for another process's write when asked), its pragmas, and the
// statements it keeps prepared.
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { UserError } from '../../domain/errors.js';
import { lruCache } from '../../lib/lru.js';
import { FROM_FLAG, queryLog, reasonOf, type ConnectOptions, type Connection } from './connection.js';
import { BUSY_TIMEOUT_MS, isBusy } from './journal.js';
import type { Database } from './tables.js';

/**
 * Creates a folder and its missing parents one level at a time. Node's recursive mkdirSync never returns for a path
 * under /proc (it retries the ENOENT forever); this fails at once with the first folder that cannot be made.
 */
function ensureFolder(folder: string): void {
  if (existsSync(folder)) {
    if (!statSync(folder).isDirectory()) throw new Error(`${folder} is not a folder`);
    return;
  }
  const parent = dirname(folder);
  if (parent !== folder) ensureFolder(parent);
  mkdirSync(folder);
}

/** How often an open that waits for another process's write tries the file again. */
const LOCKED_RETRY_MS = 100;

/**
 * Puts the file in WAL. While another process's write holds the file under a rollback journal (src/storage/db/journal.ts)
 * SQLite refuses this: after its busy timeout while the write holds the file exclusively, at once while it holds only
 * its reserved lock (the open then holds the shared lock while it asks for more, and waiting could deadlock). So an
 * open that may wait tries again, holding nothing between tries, until it succeeds.
 */
async function walOrWait(database: SQLite.Database, onLocked: (() => void) | undefined): Promise<void> {
  // Each try fails at once rather than after the busy timeout, so that the command says it waits from the start (the
  // caller sets the timeout afterwards).
  if (onLocked !== undefined) database.pragma('busy_timeout = 0');
  for (let told = false; ;) {
    try {
      database.pragma('journal_mode = WAL');
      return;
    } catch (error) {
      if (onLocked === undefined || !isBusy(error)) throw error;
      if (!told) onLocked();
      told = true;
    }
    await new Promise((resolve) => setTimeout(resolve, LOCKED_RETRY_MS));
  }
}

export async function openSqlite(path: string, options: ConnectOptions): Promise<Connection> {
  const fail = (reason: string) => new UserError(`cannot open the SQLite database ${path} ${FROM_FLAG}: ${reason}`);
  if (path !== ':memory:') {
    try {
      ensureFolder(dirname(path));
    } catch (error) {
      throw fail(`cannot create its folder: ${reasonOf(error)}`);
    }
    if (existsSync(path) && statSync(path).isDirectory()) throw fail('it is a folder, not a file');
  }
  let database: SQLite.Database | undefined;
  try {
    database = new SQLite(path);
    // Both change the file (a verifying open must not): larger pages, set before the first table exists, keep stored
    // JSON documents (1-3 KB) off overflow pages; WAL lets readers run beside an import.
    if (options.migrations !== 'verify') {
      database.pragma('page_size = 16384');
      await walOrWait(database, options.onLocked);
    }
    // NORMAL is durable across application crashes in WAL mode and much faster than FULL for imports.
    database.pragma('synchronous = NORMAL');
    database.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    database.pragma(`cache_size = -${SQLITE_CACHE_KIB}`);
    if (options.checkpointAtCommit === false) database.pragma('wal_autocheckpoint = 0');
  } catch (error) {
    database?.close();
    throw fail(reasonOf(error));
  }
  return {
    db: new Kysely<Database>({
      dialect: new SqliteDialect({ database: preparedOnce(database) }),
      log: queryLog(options),
    }),
    dialect: 'sqlite',
  };
}

/** SQLite's page cache per connection, and while an ingest runs (src/storage/write/pipeline.ts). */
export const SQLITE_CACHE_KIB = 65_536;
export const INGEST_CACHE_KIB = 4096;

/** How many prepared statements a SQLite connection keeps, and how many of them may be long (bulk writes). */
const STATEMENTS_KEPT = 500;
const LONG_STATEMENTS_KEPT = 16;
const LONG_SQL = 16_384;

/**
 * Kysely prepares every statement it runs, and better-sqlite3 compiles SQL on every prepare: measured at 9-14% of a
 * request's CPU (docs/BENCHMARKS.md, "Per-request overhead"). Statements are kept by SQL text, least recently used
 * out; Kysely runs one statement at a time per connection (its connection mutex), so a kept statement is never busy
 * when it is handed out again, and SQLite re-prepares a kept statement by itself after a schema change. The multi-row
 * statements of a bulk write (tens of kilobytes of SQL, the same text for every full batch) cost 4% of an import to
 * prepare and finalise each time; a few of them are kept apart, so they cannot push out the requests' statements.
 */
function preparedOnce(database: SQLite.Database) {
  const short = lruCache<SQLite.Statement>(STATEMENTS_KEPT);
  const long = lruCache<SQLite.Statement>(LONG_STATEMENTS_KEPT);
  return {
    close: () => database.close(),
    prepare(text: string): SQLite.Statement {
      const cache = text.length <= LONG_SQL ? short : long;
      const found = cache.get(text);
      if (found !== undefined) return found;
      const statement = database.prepare(text);
      cache.set(text, statement);
      return statement;
    },
  };
}

/** A snapshot reader's page cache: it reads an export's batches, each once. */
const SNAPSHOT_CACHE_KIB = 8192;

/**
 * A second, read-only connection to a SQLite file for a snapshot that stays open across an export (src/storage/tx/
 * snapshot.ts): in WAL mode its transaction keeps its snapshot while the main connection writes. Undefined when the
 * file is not in WAL (a reader would block the writes) or is in memory (no second connection reaches it).
 */
export function openSqliteReader(path: string, options: ConnectOptions): Kysely<Database> | undefined {
  if (path === ':memory:') return undefined;
  const database = new SQLite(path, { readonly: true, fileMustExist: true });
  try {
    if (String(database.pragma('journal_mode', { simple: true })).toLowerCase() !== 'wal') {
      database.close();
      return undefined;
    }
    database.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    database.pragma(`cache_size = -${SNAPSHOT_CACHE_KIB}`);
  } catch (error) {
    database.close();
    throw error;
  }
  return new Kysely<Database>({
    dialect: new SqliteDialect({ database: preparedOnce(database) }),
    log: queryLog(options),
  });
}
