import {
  sql,
  type Compilable,
  type RawBuilder,
  type CompiledQuery,
  type Kysely,
  type SelectQueryBuilder,
  type Transaction,
} from 'kysely';
import type { Database, TENANT_TABLES } from './tables.js';
import type { Dialect } from './types.js';
import { gatheredPerTurn } from './gathered-reads.js';
import { takeWriteLock, underBulkJournal } from './journal.js';

type TenantTableName = (typeof TENANT_TABLES)[number];

/**
 * The only way storage reads a tenant table: the tenant predicate is part of the query from its first clause, so no
 * query over tenant data can be built without it.
 */
export function fromTenant<T extends TenantTableName>(
  db: Kysely<Database>,
  table: T,
  tenantId: string,
): SelectQueryBuilder<Database, T, object> {
  // Widened to the union: Kysely cannot pick its selectFrom overload for a generic table name.
  const name: TenantTableName = table;
  return db.selectFrom(name).where(sql.ref(`${table}.tenant_id`), '=', tenantId);
}

/** The advisory lock by which bulk writes take turns with feed loads on PostgreSQL: a fixed key of this application's. */
export const FEED_LOCK = 0x5ec1feed;
/** The class of the advisory locks by which writes to one tenant take turns (the second key: a hash of its id). */
export const TENANT_LOCK_CLASS = 0x5ec1a5e7;

/**
 * What a bulk write waits for: on PostgreSQL its turn with the feed loads, or with another write to the same tenant; on
 * SQLite, which has one writer at a time, another process's write to the database.
 */
export type WaitReason = 'feeds' | 'tenant' | 'database';

/**
 * On PostgreSQL, waits for any other bulk write to the tenant to commit and holds the tenant until this transaction
 * ends: an import, an ingest or a derivation reads a tenant's assets, findings and risks and writes what it made of
 * them, so two at once would each work from a state without the other's writes (two ingests of a new image: both
 * insert it, one fails on the key; a derivation beside an ingest: risks from findings the ingest was replacing). A
 * risk's state takes it too: a derivation writes back each risk's state as it read it. Called before the first read of
 * the tenant's data. SQLite has one writer at a time.
 */
export async function takeTenantTurn(
  tx: Transaction<Database>,
  dialect: Dialect,
  tenantId: string,
  onWait?: (reason: WaitReason) => void,
): Promise<void> {
  if (dialect === 'postgres')
    await takeTurn(tx, 'exclusive', sql`${TENANT_LOCK_CLASS}::int, hashtext(${tenantId})`, () => onWait?.('tenant'));
}

/**
 * Takes a PostgreSQL advisory lock held to the transaction's end: at once if it is free, else after calling `onWait`
 * (so that a command standing still says why) and waiting for it.
 */
async function takeTurn(
  tx: Transaction<Database>,
  mode: 'shared' | 'exclusive',
  key: RawBuilder<unknown>,
  onWait: () => void,
): Promise<void> {
  const suffix = sql.raw(mode === 'shared' ? '_shared' : '');
  const { rows } = await sql<{ ok: boolean }>`select pg_try_advisory_xact_lock${suffix}(${key}) as ok`.execute(tx);
  if (rows[0]?.ok === true) return;
  onWait();
  await sql`select pg_advisory_xact_lock${suffix}(${key})`.execute(tx);
}

export interface BulkOptions {
  /** False for a dry run, which must not touch the file: leaving WAL and coming back rewrites its header. */
  takeFile?: boolean;
  /**
   * A feed load takes the feeds for itself (`load`); every other bulk write reads them (`read`, the default): its
   * findings' intel, their EPSS for the rules. On PostgreSQL a `load` waits for the writes that read the feeds and they
   * wait for it, so none works from feeds another is replacing (docs/DESIGN.md §87). SQLite has one writer at a time.
   */
  feeds?: 'read' | 'load';
  /** Called when the transaction has to wait for its turn (a feed load, the writes before one, another process's). */
  onWait?: ((reason: WaitReason) => void) | undefined;
}

/**
 * A transaction for a bulk write (import, ingest, feeds, risk derivation). Rows written in it are invisible to
 * autoanalyze, so PostgreSQL would plan its key lookups for the tables as they were before it (empty, for a first
 * import or derivation) and scan ever larger ones; every lookup of a bulk write is by key, so it uses the indexes. On
 * SQLite it runs under a rollback journal when the process has the file to itself, and takes the write lock first,
 * waiting for another process's write rather than failing (src/storage/journal.ts).
 */
export const bulkTransaction = <T>(
  db: Kysely<Database>,
  dialect: Dialect,
  work: (tx: Transaction<Database>) => Promise<T>,
  { takeFile = true, feeds = 'read', onWait }: BulkOptions = {},
): Promise<T> => {
  const run = () =>
    writeTransaction(
      db,
      dialect,
      async (tx) => {
        if (dialect === 'postgres') {
          // First, before any read: READ COMMITTED gives each later statement a snapshot taken after the turn began.
          await takeTurn(tx, feeds === 'load' ? 'exclusive' : 'shared', sql`${FEED_LOCK}`, () => onWait?.('feeds'));
          await sql`set local enable_seqscan = off`.execute(tx);
        }
        return work(tx);
      },
      onWait,
    );
  return dialect === 'sqlite' && takeFile ? underBulkJournal(db, run) : run();
};

/**
 * A write transaction: on SQLite it takes the write lock first, so that beside another process's write it waits for
 * its commit, calling `onWait`, then reads what that write committed, instead of failing after the busy timeout
 * (`tenants create` beside a feed load failed after 5 s). Every write of a command runs in one: the bulk ones through
 * bulkTransaction, a tenant or a key directly. PostgreSQL locks rows; its turns are bulkTransaction's.
 */
export const writeTransaction = <T>(
  db: Kysely<Database>,
  dialect: Dialect,
  work: (tx: Transaction<Database>) => Promise<T>,
  onWait?: (reason: WaitReason) => void,
): Promise<T> =>
  db.transaction().execute(async (tx) => {
    if (dialect === 'sqlite') await takeWriteLock(tx, () => onWait?.('database'));
    return work(tx);
  });

/** Splits a list for `in (…)` lists of a bounded length. */
export const chunks = <T>(items: readonly T[], size = 500): T[][] => {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
};

/**
 * Runs `each` over a tenant's assets in id order, `size` at a time: every asset (keyset pages, so the last page costs
 * what the first does), or the given ones. `select` is the asset query without its limit, ordered by `assets.id`.
 */
export async function forAssetBatches<R extends { id: string }>(
  select: () => SelectQueryBuilder<Database, 'assets', R>,
  scope: 'all' | ReadonlySet<string>,
  size: number,
  each: (assets: R[]) => Promise<void>,
): Promise<void> {
  if (scope !== 'all') {
    for (const ids of chunks([...scope].sort(), size)) {
      const assets = await select().where('assets.id', 'in', ids).execute();
      if (assets.length > 0) await each(assets);
    }
    return;
  }
  let after: string | null = null;
  for (;;) {
    const assets: R[] = await (after === null ? select() : select().where('assets.id', '>', after))
      .limit(size)
      .execute();
    if (assets.length === 0) return;
    await each(assets);
    after = assets[assets.length - 1]!.id;
  }
}

/** Appends a value to the list of a key (creating it): grouping rows without copying the list at each row. */
export function appendTo<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/** A small least-recently-used map for answers that depend only on (tenant, data version, filters). */
export function lruCache<V>(capacity: number) {
  const map = new Map<string, V>();
  return {
    get(key: string): V | undefined {
      const value = map.get(key);
      if (value !== undefined) {
        map.delete(key);
        map.set(key, value);
      }
      return value;
    },
    set(key: string, value: V): void {
      map.delete(key);
      map.set(key, value);
      if (map.size > capacity) map.delete(map.keys().next().value as string);
    },
  };
}

/** Runs tenant reads so that the database itself also restricts them to the tenant (see tenantReader). */
export type TenantReader = <T>(tenantId: string, work: (db: Kysely<Database>) => Promise<T>) => Promise<T>;

let escapeLiteral: ((text: string) => string) | undefined;

/**
 * Every read runs in one transaction, so that all its statements see one snapshot of the data: a page, its count and
 * its embeds are all from before an import's commit or all from after it, never a mix.
 * PostgreSQL: a read-only REPEATABLE READ transaction (READ COMMITTED would give each statement its own snapshot)
 * with the transaction-local `secinv.tenant_id` that the row-level security policies read, so even a query that lost
 * its tenant predicate sees one tenant. SQLite: a deferred transaction, whose first read fixes the snapshot in WAL
 * mode; it has no row-level security, the predicate added by fromTenant() is the wall there. Tests of the database's
 * own walls ask for `read write`, to see the privileges refuse a write rather than the transaction.
 */
export function tenantReader(
  db: Kysely<Database>,
  dialect: Dialect,
  access: 'read only' | 'read write' = 'read only',
): TenantReader {
  if (dialect === 'sqlite') return (_tenantId, work) => db.transaction().execute(work);
  // BEGIN and the tenant's setting in one round trip, where Kysely's transaction would take two: each costs the
  // server tens of microseconds of CPU, a fourth of a one-asset read (docs/DESIGN.md §74). Two statements in one
  // message need the simple protocol, which takes no parameters: the id is quoted by pg's own escapeLiteral.
  const begin = (tenantId: string, quote: (text: string) => string) =>
    sql.raw(
      `start transaction isolation level repeatable read ${access}; ` +
        `select set_config('secinv.tenant_id', ${quote(tenantId)}, true)`,
    );
  return (tenantId, work) =>
    db.connection().execute(async (connection) => {
      try {
        // pg is loaded on PostgreSQL only (src/storage/connect.ts): by the first read it is, and this awaits once.
        escapeLiteral ??= (await import('pg')).default.escapeLiteral;
        await begin(tenantId, escapeLiteral).execute(connection);
        const result = await work(connection);
        await sql`commit`.execute(connection);
        return result;
      } catch (error) {
        // Never back to the pool inside a transaction: a failed read (a timeout, a bad statement) is rolled back, and
        // a rollback that cannot be sent means the connection is gone anyway.
        await sql`rollback`.execute(connection).catch(() => undefined);
        throw error;
      }
    });
}

/**
 * A tenant reader for work that runs a single statement (one asset, by key). On SQLite a statement reads one snapshot by
 * itself, so it runs without BEGIN and COMMIT, two statements and a transaction object fewer (docs/DESIGN.md §38); on
 * PostgreSQL it is tenantReader's transaction, whose setting the row-level security policies read, shared by the reads
 * of one tenant asked in one turn (src/storage/gathered-reads.ts, §78).
 */
export function singleStatementReader(db: Kysely<Database>, dialect: Dialect): TenantReader {
  if (dialect === 'sqlite') return (_tenantId, work) => work(db);
  return gatheredPerTurn(tenantReader(db, dialect));
}

/** The tenant's data version as this transaction sees it (-1 for no such tenant). */
export async function dataVersion(db: Kysely<Database>, tenantId: string): Promise<number> {
  const row = await db
    .selectFrom('tenants')
    .select('data_version')
    .where('tenant_id', '=', tenantId)
    .executeTakeFirst();
  return Number(row?.data_version ?? -1);
}

/**
 * Count of matches, computed once per (tenant, data version, filters): data changes only through writes that bump the
 * version. The version is read inside the caller's read transaction, with the rows it counts, so a count is never
 * filed under a version whose rows it did not see (the version of the request's key was read before, outside it).
 */
export function countCache() {
  const counts = lruCache<number>(2000);
  return async (
    db: Kysely<Database>,
    tenantId: string,
    filters: unknown,
    count: (dataVersion: number) => Promise<number>,
    /** The version as the caller's transaction read it already. */
    known?: number,
  ): Promise<number> => {
    const version = known ?? (await dataVersion(db, tenantId));
    const key = `${tenantId}\u0000${version}\u0000${JSON.stringify(filters)}`;
    let total = counts.get(key);
    if (total === undefined) {
      total = await count(version);
      counts.set(key, total);
    }
    return total;
  };
}

/**
 * A query of one shape that Kysely builds and compiles once, on its first run: later runs bind their own values where
 * the first build put them, so a request does not pay for building and compiling it again (docs/DESIGN.md §38). Only
 * for queries whose SQL does not depend on their values (no lists, no optional clauses); made per storage, as the SQL
 * is its dialect's.
 */
export function compiledOnce<V extends string[], R>(build: (db: Kysely<Database>, ...values: V) => Compilable<R>) {
  let made: { compiled: CompiledQuery<R>; slots: (number | undefined)[] } | undefined;
  return async (db: Kysely<Database>, ...values: V): Promise<R[]> => {
    if (made === undefined) {
      // Markers no real value holds: where each lands in the parameters is where its value goes.
      const markers = values.map((_, i) => `\u0000value ${i}\u0000`) as V;
      const compiled = build(db, ...markers).compile();
      const slots = compiled.parameters.map((p) => {
        const at = markers.indexOf(p as string);
        return at === -1 ? undefined : at;
      });
      if (markers.some((_, i) => !slots.includes(i)))
        throw new Error('a value of the query is not one of its parameters');
      made = { compiled, slots };
    }
    const { compiled, slots } = made;
    const parameters = compiled.parameters.map((p, k) => {
      const slot = slots[k];
      return slot === undefined ? p : values[slot];
    });
    return (await db.executeQuery<R>({ ...compiled, parameters })).rows;
  };
}
