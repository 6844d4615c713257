import { existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import type PgModule from 'pg';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql, type LogEvent } from 'kysely';
import { UserError } from '../../domain/errors.js';
import type { Dialect } from './dialect.js';
import { migrations } from './migrations/index.js';
import { API_ROLE } from './roles.js';
import type { Database } from './tables.js';
import { lruCache } from '../../lib/lru.js';
import { BUSY_TIMEOUT_MS, isBusy } from './journal.js';
import { displayDatabaseUrl, parseDatabaseUrl } from './url.js';

/** Where every message about an unusable database says the location came from. */
const FROM_FLAG = '(given by --db or SECINV_DATABASE_URL)';

const reasonOf = (error: unknown): string => {
  const e = error as { code?: unknown; message?: unknown };
  const message = typeof e.message === 'string' ? (e.message.split('\n')[0] ?? '') : String(error);
  const text = typeof e.code === 'string' && !message.includes(e.code) ? `${e.code}: ${message}` : message;
  // A bulk write that started with the file to itself holds it until it commits (src/storage/db/journal.ts).
  return isBusy(error) ? `${text} (another process is writing it: retry when that write ends)` : text;
};

/**
 * A verifying open (`migrations: 'verify'`) of a database that holds no inventory yet: the SQLite file or PostgreSQL
 * database does not exist, or secinv never migrated it. Nothing was created.
 */
export class NoInventoryError extends UserError {
  override name = 'NoInventoryError';
}

export interface Connection {
  db: Kysely<Database>;
  dialect: Dialect;
  /** PostgreSQL's connection pool, for its state in the metrics. */
  pool?: PgModule.Pool;
}

export interface ConnectOptions {
  /**
   * `admin` (CLI, import, migrations) uses the connecting user as is; `api` (serve) switches every pooled connection
   * to API_ROLE and bounds each statement. SQLite has no roles; both are the same there.
   */
  role: 'admin' | 'api';
  /**
   * PostgreSQL, `api` role: the URL the API logs in with. Default: the database URL with the user replaced by
   * API_ROLE and no password (trust or certificate authentication).
   */
  apiUrl?: string | undefined;
  poolMax: number;
  /** PostgreSQL: opening one connection may take this long; past it the request fails (503). */
  connectTimeoutMs: number;
  /**
   * PostgreSQL: how long a request may wait for a client of a busy pool (every client checked out) before it fails
   * (503). A burst larger than the pool queues within this wait.
   */
  queueTimeoutMs: number;
  statementTimeoutMs: number;
  /**
   * Asset rows whose filter columns the asset list may keep in memory to count matches (over all tenants; a tenant
   * larger than this is counted by SQL); 0 counts everything by SQL (docs/DESIGN.md §35).
   */
  countColumnsMaxRows: number;
  /**
   * How many findings of the vulnerability list's sort index a package-filtered page may walk before it starts from
   * the matching packages instead (or twice the matches, if more); 0 never walks. Default: 20,000 on SQLite, 0 on
   * PostgreSQL, whose planner chooses between the two plans itself (docs/DESIGN.md §39).
   */
  packageWalkRows?: number;
  /** Called with the SQL of every statement run (tests count statements per request); awaited before the next. */
  onQuery?: (sql: string) => void | Promise<void>;
  /** Called when a pooled connection fails (the database restarted…); the pool replaces it. */
  onConnectionError?: (error: Error) => void;
  /**
   * SQLite: given, an open that finds the file held by another process's write (one that had the file to itself, under
   * a rollback journal) calls it once and waits for that write to commit; without it the open is refused (after the
   * busy timeout at most), as the server's is: started during a first import, it must not serve a half-empty inventory
   * (docs/DESIGN.md §89).
   */
  onLocked?: (() => void) | undefined;
  /**
   * `apply` (default) migrates the schema to the latest version. `verify` changes nothing: a database whose schema is
   * behind is refused (dry runs write nothing, not even a migration).
   */
  migrations?: 'apply' | 'verify';
}

export const defaultConnectOptions: ConnectOptions = {
  role: 'admin',
  poolMax: 10,
  connectTimeoutMs: 2000,
  queueTimeoutMs: 20_000,
  statementTimeoutMs: 10_000,
  countColumnsMaxRows: 1_000_000,
};

/** node-postgres, once a PostgreSQL URL has been opened (see connect). */
let pg: typeof PgModule;

export async function connect(url: string, options: ConnectOptions = defaultConnectOptions): Promise<Connection> {
  const location = parseDatabaseUrl(url);
  if (location.dialect === 'sqlite') {
    if (options.migrations === 'verify' && location.path !== ':memory:' && !existsSync(location.path)) {
      throw new NoInventoryError(`the database ${displayDatabaseUrl(url)} does not exist`);
    }
    const connection = await openSqlite(location.path, options);
    try {
      await migrateOrClose(connection, options);
    } catch (error) {
      if (error instanceof UserError) throw error;
      // A file that is not a database, or one that cannot be written (read-only file or folder), fails here.
      throw new UserError(`cannot open the SQLite database ${location.path} ${FROM_FLAG}: ${reasonOf(error)}`);
    }
    return connection;
  }
  // node-postgres is loaded on the first PostgreSQL connection only: ~15 MB of memory every SQLite command and server
  // would carry for nothing.
  pg ??= (await import('pg')).default;
  // Migrations run as the connecting user, before any connection takes the API role.
  try {
    if (options.migrations !== 'verify') await ensureDatabase(location.url, options);
    const migrator = openPostgres(location.url, { ...options, role: 'admin', poolMax: 1 });
    await migrateOrClose(migrator, options);
    await migrator.db.destroy();
  } catch (error) {
    if (error instanceof UserError) throw error;
    if ((error as { code?: unknown }).code === '3D000')
      throw new NoInventoryError(`the database ${displayDatabaseUrl(url)} does not exist`);
    throw new UserError(
      `cannot open the PostgreSQL database ${displayDatabaseUrl(url)} ${FROM_FLAG}: ${reasonOf(error)}`,
    );
  }
  if (options.role === 'admin') return openPostgres(location.url, options);
  const connection = openPostgres(options.apiUrl ?? apiRoleUrl(location.url), options);
  // Fail closed: refuse to serve unless the connections really log in as the role row-level security constrains.
  const { rows } = await sql<{ user: string }>`select session_user as "user"`
    .execute(connection.db)
    .catch(async (error: unknown) => {
      await connection.db.destroy();
      throw new UserError(
        `cannot connect as the database role ${API_ROLE}: ${(error as Error).message} (see docs/SCALING.md)`,
      );
    });
  if (rows[0]?.user !== API_ROLE) {
    await connection.db.destroy();
    throw new UserError(
      `the API must connect as the database role ${API_ROLE}, not ${rows[0]?.user ?? 'nobody'} (see docs/SCALING.md)`,
    );
  }
  return connection;
}

/** Creates the database of the URL when it does not exist yet (the user needs CREATEDB), so one command starts. */
async function ensureDatabase(url: string, options: ConnectOptions): Promise<void> {
  const probe = new pg.Client({ connectionString: url, connectionTimeoutMillis: options.connectTimeoutMs });
  try {
    await probe.connect();
    return;
  } catch (error) {
    if ((error as { code?: string }).code !== '3D000') throw error;
  } finally {
    await probe.end().catch(() => undefined);
  }
  const parsed = new URL(url);
  const name = decodeURIComponent(parsed.pathname.slice(1));
  parsed.pathname = '/postgres';
  const maintenance = new pg.Client({
    connectionString: parsed.toString(),
    connectionTimeoutMillis: options.connectTimeoutMs,
  });
  await maintenance.connect();
  try {
    await maintenance.query(`create database ${pg.escapeIdentifier(name)}`);
  } catch (error) {
    // Another process created it meanwhile.
    if ((error as { code?: string }).code !== '42P04') throw error;
  } finally {
    await maintenance.end();
  }
}

const queryLog = ({ onQuery }: ConnectOptions) => (onQuery ? (event: LogEvent) => onQuery(event.query.sql) : undefined);

function apiRoleUrl(url: string): string {
  const parsed = new URL(url);
  parsed.username = API_ROLE;
  parsed.password = '';
  return parsed.toString();
}

async function migrateOrClose(connection: Connection, options: ConnectOptions): Promise<void> {
  try {
    await migrate(connection, options.migrations ?? 'apply');
  } catch (error) {
    await connection.db.destroy();
    throw error;
  }
}

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

async function openSqlite(path: string, options: ConnectOptions): Promise<Connection> {
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

/** SQLite's page cache per connection, and while an ingest runs (src/storage/index.ts). */
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

/**
 * A client constructor for pg-pool that ignores the options the pool passes (its own, whose connection timeout is the
 * queue's) and builds every client from `config`. A plain function, not a class: called with `new`, the object it
 * returns is the result.
 */
const clientsOf = (config: PgModule.ClientConfig) =>
  function client() {
    const made = new pg.Client(config);
    if (config.query_timeout === undefined) return made;
    // pg answers a query that outlived query_timeout with an error but keeps the connection, whose late reply would
    // answer the next query: a connection that timed out is closed, so the pool drops it and opens a fresh one.
    const query = made.query.bind(made) as (...args: unknown[]) => unknown;
    made.query = ((...args: unknown[]) => {
      const result = query(...args);
      if (result instanceof Promise)
        result.catch((error: unknown) => {
          if (error instanceof Error && error.message === 'Query read timeout')
            (made as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
        });
      return result;
    }) as typeof made.query;
    return made;
  } as unknown as new () => PgModule.Client;

/**
 * How much longer than the statement timeout the API waits for a reply itself: the server cancels a slow statement
 * (57014) well within it, so this fires only when the server cannot answer at all (frozen, or a network that drops
 * packets without closing).
 */
const QUERY_TIMEOUT_MARGIN_MS = 2000;

function openPostgres(url: string, options: ConnectOptions): Connection {
  // int8 columns (execution ids) fit in a double; return them as numbers like SQLite does.
  pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));
  const pool = new pg.Pool({
    max: options.poolMax,
    // pg-pool's connectionTimeoutMillis bounds both the wait for a free client of a full pool and the opening of a new
    // connection. One bound for both turned every burst longer than it into 503s from a healthy database, so the pool's
    // bounds only the wait in its queue, and each client bounds its own opening: a server that refuses or stalls a new
    // connection still fails within the connect timeout.
    connectionTimeoutMillis: options.queueTimeoutMs,
    Client: clientsOf({
      connectionString: url,
      connectionTimeoutMillis: options.connectTimeoutMs,
      // A statement that outlives this is cancelled by the server (57014) and answered 503, not left hanging; a server
      // too frozen to cancel anything is given up on by the client (query_timeout) and answered 503 as well.
      ...(options.role === 'api'
        ? {
            statement_timeout: options.statementTimeoutMs,
            query_timeout: options.statementTimeoutMs + QUERY_TIMEOUT_MARGIN_MS,
          }
        : {}),
      // Probes a connection that has gone quiet, so a peer that vanished without closing is noticed by the kernel.
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
    }),
    idleTimeoutMillis: 30_000,
  });
  // A client whose server went away emits 'error', idle in the pool or checked out between two statements; without a
  // listener that would crash the process. The failing query itself still rejects (503) and the pool replaces the client.
  pool.on('error', (error) => options.onConnectionError?.(error));
  pool.on('connect', (client) => {
    client.on('error', (error) => options.onConnectionError?.(error));
  });
  return {
    db: new Kysely<Database>({ dialect: new PostgresDialect({ pool }), log: queryLog(options) }),
    dialect: 'postgres',
    pool,
  };
}

async function migrate({ db, dialect }: Connection, mode: 'apply' | 'verify'): Promise<void> {
  const migrator = new Migrator({ db, provider: migrations(dialect) });
  if (mode === 'verify') {
    // Reads only: without a migration table (an empty database) every migration is pending.
    const known = await migrator.getMigrations();
    const pending = known.filter((m) => m.executedAt === undefined);
    if (pending.length === known.length) throw new NoInventoryError('the database holds no inventory yet');
    if (pending.length > 0) {
      throw new UserError(
        'the database schema is older than this version of secinv; run the command once without --dry-run to upgrade it',
      );
    }
    return;
  }
  for (let attempt = 1; ; attempt += 1) {
    const { error } = await migrator.migrateToLatest();
    if (!error) return;
    // Databases of one PostgreSQL cluster share its roles: two of them migrated at once both alter the API role
    // (0002) and the first holds the updated row until its whole migration commits, so PostgreSQL fails the other
    // with "tuple concurrently updated". That migration rolled back whole, so it runs again after a random wait that
    // grows with each attempt (of eight databases opened at once, one per round got through when the waits were short and equal).
    if (attempt < MIGRATION_ATTEMPTS && concurrentCatalogUpdate(error)) {
      await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(2000, 100 * 2 ** attempt)));
      continue;
    }
    throw error instanceof Error ? error : new Error(`migration failed: ${JSON.stringify(error)}`);
  }
}

const MIGRATION_ATTEMPTS = 12;

const concurrentCatalogUpdate = (error: unknown): boolean =>
  (error as { code?: unknown }).code === 'XX000' && /tuple concurrently updated/.test(String(error));
