// Write transactions: the one every command's write runs in, and the bulk write's, which takes its turns first.
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../db/tables.js';
import type { Dialect, WaitReason } from '../types.js';
import { takeWriteLock, underBulkJournal } from '../db/journal.js';
import { FEED_LOCK, takeTurn } from './turns.js';

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
 * waiting for another process's write rather than failing (src/storage/db/journal.ts).
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
