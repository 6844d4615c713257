import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql, type LogEvent } from 'kysely';
import { UserError } from '../domain/errors.js';
import type { Dialect } from './dialect.js';
import { migrations } from './migrations.js';
import { API_ROLE } from './roles.js';
import type { Database } from './tables.js';

export type DatabaseLocation = { dialect: 'sqlite'; path: string } | { dialect: 'postgres'; url: string };

/** `sqlite:PATH`, a bare file path, or `postgres://…` / `postgresql://…` (decisions §2). */
export function parseDatabaseUrl(url: string): DatabaseLocation {
  if (/^postgres(ql)?:\/\//i.test(url)) return { dialect: 'postgres', url };
  const path = url.startsWith('sqlite:') ? url.slice('sqlite:'.length) : url;
  if (path === '') throw new UserError(`invalid database URL '${url}': no file path`);
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(path)) throw new UserError(`unsupported database URL '${url}' (use sqlite:PATH or postgres://…)`);
  return { dialect: 'sqlite', path: path === ':memory:' ? path : resolve(path) };
}

export interface Connection {
  db: Kysely<Database>;
  dialect: Dialect;
  /** PostgreSQL's connection pool, for its state in the metrics. */
  pool?: pg.Pool;
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
  connectTimeoutMs: number;
  statementTimeoutMs: number;
  /** Called with the SQL of every statement run (tests count statements per request). */
  onQuery?: (sql: string) => void;
  /** Called when a pooled connection fails (the database restarted…); the pool replaces it. */
  onConnectionError?: (error: Error) => void;
}

export const defaultConnectOptions: ConnectOptions = { role: 'admin', poolMax: 10, connectTimeoutMs: 2000, statementTimeoutMs: 10_000 };

export async function connect(url: string, options: ConnectOptions = defaultConnectOptions): Promise<Connection> {
  const location = parseDatabaseUrl(url);
  if (location.dialect === 'sqlite') {
    const connection = openSqlite(location.path, options);
    await migrateOrClose(connection);
    return connection;
  }
  // Migrations run as the connecting user, before any connection takes the API role.
  await ensureDatabase(location.url, options);
  const migrator = openPostgres(location.url, { ...options, role: 'admin', poolMax: 1 });
  await migrateOrClose(migrator);
  await migrator.db.destroy();
  if (options.role === 'admin') return openPostgres(location.url, options);
  const connection = openPostgres(options.apiUrl ?? apiRoleUrl(location.url), options);
  // Fail closed: refuse to serve unless the connections really log in as the role row-level security constrains.
  const { rows } = await sql<{ user: string }>`select session_user as "user"`.execute(connection.db).catch(async (error: unknown) => {
    await connection.db.destroy();
    throw new UserError(`cannot connect as the database role ${API_ROLE}: ${(error as Error).message} (see docs/SCALING.md)`);
  });
  if (rows[0]?.user !== API_ROLE) {
    await connection.db.destroy();
    throw new UserError(`the API must connect as the database role ${API_ROLE}, not ${rows[0]?.user ?? 'nobody'} (see docs/SCALING.md)`);
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
  const maintenance = new pg.Client({ connectionString: parsed.toString(), connectionTimeoutMillis: options.connectTimeoutMs });
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

async function migrateOrClose(connection: Connection): Promise<void> {
  try {
    await migrate(connection);
  } catch (error) {
    await connection.db.destroy();
    throw error;
  }
}

function openSqlite(path: string, options: ConnectOptions): Connection {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  let database: SQLite.Database;
  try {
    database = new SQLite(path);
  } catch (error) {
    throw new UserError(`cannot open SQLite database ${path}: ${(error as Error).message}`);
  }
  // Before the first table exists: larger pages keep stored JSON documents (1-3 KB) off overflow pages.
  database.pragma('page_size = 16384');
  database.pragma('journal_mode = WAL');
  // NORMAL is durable across application crashes in WAL mode and much faster than FULL for imports.
  database.pragma('synchronous = NORMAL');
  database.pragma('busy_timeout = 5000');
  database.pragma('cache_size = -65536');
  return { db: new Kysely<Database>({ dialect: new SqliteDialect({ database }), log: queryLog(options) }), dialect: 'sqlite' };
}

function openPostgres(url: string, options: ConnectOptions): Connection {
  // int8 columns (execution ids) fit in a double; return them as numbers like SQLite does.
  pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolMax,
    connectionTimeoutMillis: options.connectTimeoutMs,
    idleTimeoutMillis: 30_000,
    // A statement that outlives this is cancelled by the server (57014) and answered 503, not left hanging.
    ...(options.role === 'api' ? { statement_timeout: options.statementTimeoutMs } : {}),
  });
  // A client whose server went away emits 'error', idle in the pool or checked out between two statements; without a
  // listener that would crash the process. The failing query itself still rejects (503) and the pool replaces the client.
  pool.on('error', (error) => options.onConnectionError?.(error));
  pool.on('connect', (client) => {
    client.on('error', (error) => options.onConnectionError?.(error));
  });
  return { db: new Kysely<Database>({ dialect: new PostgresDialect({ pool }), log: queryLog(options) }), dialect: 'postgres', pool };
}

async function migrate({ db, dialect }: Connection): Promise<void> {
  const migrator = new Migrator({ db, provider: migrations(dialect) });
  const { error } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
}
