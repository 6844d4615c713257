// What opening a database takes and gives, on either dialect (sqlite.ts, postgres.ts; connect.ts opens and migrates).
import type { Kysely, LogEvent } from 'kysely';
import type PgModule from 'pg';
import { UserError } from '../../domain/errors.js';
import type { Dialect } from './dialect.js';
import { isBusy } from './journal.js';
import type { Database } from './tables.js';

/** Where every message about an unusable database says the location came from. */
export const FROM_FLAG = '(given by --db or SECINV_DATABASE_URL)';

export const reasonOf = (error: unknown): string => {
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
  /**
   * SQLite: false leaves the WAL's pages to Storage.checkpoint instead of copying them into the file at the commit
   * that fills it past 1,000 pages: a server's connections, whose scan runner checkpoints while idle (docs/DESIGN.md
   * §118). Default true, as SQLite does.
   */
  checkpointAtCommit?: boolean;
}

export const defaultConnectOptions: ConnectOptions = {
  role: 'admin',
  poolMax: 10,
  connectTimeoutMs: 2000,
  queueTimeoutMs: 20_000,
  statementTimeoutMs: 10_000,
  countColumnsMaxRows: 1_000_000,
};

export const queryLog = ({ onQuery }: ConnectOptions) =>
  onQuery ? (event: LogEvent) => onQuery(event.query.sql) : undefined;
