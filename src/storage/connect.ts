import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { Kysely, Migrator, PostgresDialect, SqliteDialect } from 'kysely';
import { UserError } from '../errors.js';
import type { Dialect } from './dialect.js';
import { migrations } from './migrations.js';
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
}

export async function connect(url: string): Promise<Connection> {
  const location = parseDatabaseUrl(url);
  const connection = location.dialect === 'sqlite' ? openSqlite(location.path) : openPostgres(location.url);
  try {
    await migrate(connection);
  } catch (error) {
    await connection.db.destroy();
    throw error;
  }
  return connection;
}

function openSqlite(path: string): Connection {
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
  return { db: new Kysely<Database>({ dialect: new SqliteDialect({ database }) }), dialect: 'sqlite' };
}

function openPostgres(url: string): Connection {
  // int8 columns (execution ids) fit in a double; return them as numbers like SQLite does.
  pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));
  const pool = new pg.Pool({ connectionString: url, max: 10, connectionTimeoutMillis: 5000 });
  return { db: new Kysely<Database>({ dialect: new PostgresDialect({ pool }) }), dialect: 'postgres' };
}

async function migrate({ db, dialect }: Connection): Promise<void> {
  const migrator = new Migrator({ db, provider: migrations(dialect) });
  const { error } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
}
