// Opening a PostgreSQL database: created when missing, a pool whose clients bound their own opening and statements,
// and the URL the API role logs in with. node-postgres is loaded on the first PostgreSQL open only (loadPg): ~15 MB of
// memory every SQLite command and server would carry for nothing.
import type PgModule from 'pg';
import { Kysely, PostgresDialect } from 'kysely';
import { queryLog, type ConnectOptions, type Connection } from './connection.js';
import { API_ROLE } from './roles.js';
import type { Database } from './tables.js';

/** node-postgres, once loadPg has run. */
let pg: typeof PgModule;

export async function loadPg(): Promise<void> {
  pg ??= (await import('pg')).default;
}

/** Creates the database of the URL when it does not exist yet (the user needs CREATEDB), so one command starts. */
export async function ensureDatabase(url: string, options: ConnectOptions): Promise<void> {
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

export function apiRoleUrl(url: string): string {
  const parsed = new URL(url);
  parsed.username = API_ROLE;
  parsed.password = '';
  return parsed.toString();
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

export function openPostgres(url: string, options: ConnectOptions): Connection {
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
