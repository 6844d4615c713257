// The journal a bulk write runs under on SQLite (docs/DESIGN.md §40). WAL writes every page twice: into the WAL as the
// transaction spills and commits, then into the database by the checkpoint. A rollback journal writes a page that the
// transaction appends to the file once, and journals only the pages that existed before it. A first import of 1M
// findings grows the file by 6 GB, so WAL cost it 38 s more (118 s against 80 s, docs/BENCHMARKS.md).
import { sql, type Kysely } from 'kysely';
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
 * While the rollback journal is on, the write holds the file as a whole: a process that opens it meanwhile is refused
 * (SQLITE_BUSY, reported as such by src/storage/connect.ts) and one that has not read it yet waits for the commit.
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
    await pragma(db, 'journal_mode = wal');
    await pragma(db, 'synchronous = normal');
  }
}
