// The journal a bulk write runs under on SQLite (docs/DESIGN.md §40). WAL writes every page twice: into the WAL as the
// transaction spills and commits, then into the database by the checkpoint. A rollback journal writes a page that the
// transaction appends to the file once, and journals only the pages that existed before it. A first import of 1M
// findings grows the file by 6 GB, so WAL cost it 38 s more (118 s against 80 s, docs/BENCHMARKS.md).
import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../types.js';
import type { Database } from './tables.js';

/** How long a SQLite statement waits for another connection's lock before failing with SQLITE_BUSY. */
export const BUSY_TIMEOUT_MS = 5000;

const pragma = async (db: Kysely<Database>, text: string): Promise<string | undefined> => {
  const { rows } = await sql.raw<Record<string, unknown>>(`pragma ${text}`).execute(db);
  const value = rows[0] === undefined ? undefined : Object.values(rows[0])[0];
  return typeof value === 'string' ? value.toLowerCase() : undefined;
};

/**
 * Runs `work` under a rollback journal when no other connection has the SQLite database open, and under WAL, as
 * always, when one has: WAL is what lets the server read beside a write, so a write never takes it from a reader. SQLite
 * refuses to leave WAL while another connection has the file open, which is the test: it is tried once, without waiting.
 * While the rollback journal is on, the write holds the file as a whole: a server that opens it meanwhile is refused
 * (SQLITE_BUSY, reported as such by src/storage/db/sqlite.ts), a command's open waits for the commit (`onLocked`).
 * Synchronous is FULL meanwhile, which a rollback journal needs to survive a power loss; WAL and NORMAL come back
 * before `work`'s result is returned. A kill leaves a hot journal that the next connection to open the file rolls back.
 */
export async function underBulkJournal<T>(db: Kysely<Database>, work: () => Promise<T>): Promise<T> {
  // An in-memory database has no file to share.
  if ((await pragma(db, 'journal_mode')) !== 'wal') return work();
  let alone = false;
  await pragma(db, 'busy_timeout = 0');
  try {
    alone = (await pragma(db, 'journal_mode = delete')) === 'delete';
  } catch {
    // SQLITE_BUSY: another connection has the file open; stay in WAL.
  } finally {
    await pragma(db, `busy_timeout = ${BUSY_TIMEOUT_MS}`);
  }
  if (!alone) return work();
  await pragma(db, 'synchronous = full');
  try {
    return await work();
  } finally {
    await backToWal(db);
    await pragma(db, 'synchronous = normal');
  }
}

async function backToWal(db: Kysely<Database>): Promise<void> {
  try {
    await pragma(db, 'journal_mode = wal');
  } catch (error) {
    // Another process that opened the file meanwhile now holds its write lock (it waited for this write's commit,
    // takeWriteLock below): the work is committed, so this write succeeded. The file stays under the rollback journal
    // until a connection opens it, which sets WAL again (src/storage/db/sqlite.ts).
    if (!isBusy(error)) throw error;
  }
}

/**
 * Copies the pages the WAL holds into the database file, as far as no reader still reads an older snapshot, without
 * waiting for anyone (PASSIVE, as SQLite's own checkpoint at a commit). PostgreSQL checkpoints by itself.
 */
export async function checkpoint(db: Kysely<Database>, dialect: Dialect): Promise<void> {
  if (dialect === 'sqlite') await sql.raw('pragma wal_checkpoint(passive)').execute(db);
}

/** SQLite's answer when another connection holds the lock a statement needs. */
export const isBusy = (error: unknown): boolean => {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
};

/**
 * Runs one small write on SQLite without waiting for another connection's write lock: false, with nothing written, when
 * another process holds it. For the server's own writes: better-sqlite3 waits for a lock on the thread that asked, so a
 * write that waited out the busy timeout stood the whole server still for 5 s, and again at the next request (the
 * key's `lastUsedAt` beside a long ingest: every request took 5-10 s). The statements run on the one connection, with
 * the timeout set back before anything else runs on it.
 */
export async function unlessLocked(db: Kysely<Database>, work: (db: Kysely<Database>) => Promise<unknown>) {
  return db.connection().execute(async (connection) => {
    await pragma(connection, 'busy_timeout = 0');
    try {
      await work(connection);
      return true;
    } catch (error) {
      if (isBusy(error)) return false;
      throw error;
    } finally {
      await pragma(connection, `busy_timeout = ${BUSY_TIMEOUT_MS}`);
    }
  });
}

/** How long a bulk write waits for another process's write: as long as it runs (SQLite's largest busy timeout). */
const WRITE_WAIT_MS = 2 ** 31 - 1;

/**
 * Takes SQLite's write lock as the transaction's first statement, waiting for another process's write to commit, and
 * calling `onWait` first so that a command standing still says why. SQLite makes a transaction wait for the lock only
 * while it has read nothing: one that has read is refused at once (waiting could deadlock, and under WAL its snapshot
 * would be stale). So every bulk write takes it before its first read, and then reads what the other write committed.
 * A no-op update takes the lock as any write does.
 */
export async function takeWriteLock(tx: Kysely<Database>, onWait: () => void): Promise<void> {
  const lock = sql`update feeds set feed = feed where 0`;
  await pragma(tx, 'busy_timeout = 0');
  try {
    try {
      await lock.execute(tx);
      return;
    } catch (error) {
      if (!isBusy(error)) throw error;
    }
    onWait();
    await pragma(tx, `busy_timeout = ${WRITE_WAIT_MS}`);
    await lock.execute(tx);
  } finally {
    await pragma(tx, `busy_timeout = ${BUSY_TIMEOUT_MS}`);
  }
}
