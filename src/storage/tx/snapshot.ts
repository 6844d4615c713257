// Snapshots that outlive one read (pipeline.md §4, docs/DESIGN.md §103): an export's batches all read one committed
// state, and the change-log position of that state is its `Secinv-Changes-Cursor`, so that a client that exports and
// then follows the log from there misses nothing and sees nothing twice.
import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.js';
import type { TenantReader } from './read.js';

export interface HeldRead {
  /** Runs work in the held transaction, one work at a time, for the tenant it was opened for only. */
  read: TenantReader;
  /** Ends the transaction once the works asked so far are done. Idempotent. */
  close: () => Promise<void>;
}

/**
 * Opens one transaction of `read` (with the tenant's setting on PostgreSQL) and keeps it open until `close`. Its
 * snapshot is taken by the first statement run in it. A failed statement ends nothing here: on PostgreSQL the
 * transaction is then aborted and every later work fails, which cuts the export off, never mixes two states.
 */
export async function holdRead(read: TenantReader, tenantId: string): Promise<HeldRead> {
  let release: () => void = () => undefined;
  const released = new Promise<void>((resolve) => (release = resolve));
  let opened: (db: Kysely<Database>) => void = () => undefined;
  const connection = new Promise<Kysely<Database>>((resolve) => (opened = resolve));
  const ended = read(tenantId, async (db) => {
    opened(db);
    await released;
  });
  // A transaction that cannot begin rejects `ended` before `connection` resolves.
  const db = await Promise.race([connection, ended.then(() => connection)]);
  let last: Promise<unknown> = Promise.resolve();
  let closing: Promise<void> | undefined;
  return {
    read: <T>(id: string, work: (db: Kysely<Database>) => Promise<T>): Promise<T> => {
      if (id !== tenantId || closing !== undefined)
        return Promise.reject(new Error('a snapshot reads its own tenant, until it is closed'));
      const next = last.then(() => work(db));
      last = next.catch(() => undefined);
      return next;
    },
    close: () =>
      (closing ??= last.then(async () => {
        release();
        // A read-only transaction has nothing to lose: a commit that fails (the connection went away) is no error.
        await ended.catch(() => undefined);
      })),
  };
}

/**
 * How many snapshots a process holds at once: each holds a connection (PostgreSQL: one of the pool's, of which half
 * stay for the API's other reads; SQLite: a file handle and its page cache) for as long as its export streams.
 */
export function snapshotLimit(held: number) {
  let open = 0;
  return {
    /** Takes a place; false when all are taken. */
    take: (): boolean => (open < held ? ((open += 1), true) : false),
    give: (): void => {
      open -= 1;
    },
  };
}
