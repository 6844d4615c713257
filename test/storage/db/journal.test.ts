// A bulk write on SQLite runs under a rollback journal when its connection has the file to itself, and under WAL when
// another connection has it open (src/storage/db/journal.ts): a reader is never locked out by an import, and the file is
// in WAL again afterwards, whether the write committed or failed. The data written is the same either way.
import Sqlite from 'better-sqlite3';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { connect } from '../../../src/storage/db/connect.js';
import { openStorage } from '../../../src/storage/index.js';
import { underBulkJournal } from '../../../src/storage/db/journal.js';
import { bulkTransaction } from '../../../src/storage/tx/write.js';
import { fixture } from '../../fixtures.js';
import { createTestDatabase, importRecords } from '../../helpers.js';
import { contentDigest } from '../introspect.js';

const modeIn = async (url: string, during?: (path: string) => void) => {
  const { db } = await connect(url);
  try {
    const seen = await bulkTransaction(db, 'sqlite', async (tx) => {
      await sql`create table if not exists probe (n integer)`.execute(tx);
      await sql`insert into probe values (1)`.execute(tx);
      during?.(url.slice('sqlite:'.length));
      const { rows } = await sql<{ journal_mode: string }>`pragma journal_mode`.execute(tx);
      return rows[0]?.journal_mode;
    });
    const { rows: after } = await sql<{ journal_mode: string }>`pragma journal_mode`.execute(db);
    const { rows: sync } = await sql<{ synchronous: number }>`pragma synchronous`.execute(db);
    return { during: seen, after: after[0]?.journal_mode, synchronous: sync[0]?.synchronous };
  } finally {
    await db.destroy();
  }
};

/** The journal mode the file's header records: 2 in bytes 18 and 19 for WAL, 1 for a rollback journal. */
const headerMode = (path: string) => {
  const db = new Sqlite(path, { readonly: true });
  try {
    return db.pragma('journal_mode', { simple: true });
  } finally {
    db.close();
  }
};

describe('the journal of a bulk write on SQLite', () => {
  it('is a rollback journal when the connection is alone, and WAL (synchronous NORMAL) again after the commit', async () => {
    const database = await createTestDatabase('sqlite');
    try {
      const path = database.url.slice('sqlite:'.length);
      expect(await modeIn(database.url)).toEqual({ during: 'delete', after: 'wal', synchronous: 1 });
      expect(headerMode(path)).toBe('wal');
    } finally {
      await database.drop();
    }
  });

  it('stays WAL while another connection has the file open, and that reader reads the last commit meanwhile', async () => {
    const database = await createTestDatabase('sqlite');
    try {
      const path = database.url.slice('sqlite:'.length);
      await modeIn(database.url);
      const reader = new Sqlite(path);
      try {
        // A connection takes its hold on the file with its first read, as a server's has long done.
        expect(reader.prepare('select count(*) as n from probe').get()).toEqual({ n: 1 });
        let readDuring: unknown;
        const seen = await modeIn(database.url, () => {
          readDuring = reader.prepare('select count(*) as n from probe').get();
        });
        expect(seen).toEqual({ during: 'wal', after: 'wal', synchronous: 1 });
        // The first write committed one row; the second had not committed when the reader looked.
        expect(readDuring).toEqual({ n: 1 });
        expect(reader.prepare('select count(*) as n from probe').get()).toEqual({ n: 2 });
      } finally {
        reader.close();
      }
    } finally {
      await database.drop();
    }
  });

  it('is WAL again after a write that fails, which leaves nothing behind', async () => {
    const database = await createTestDatabase('sqlite');
    try {
      const { db } = await connect(database.url);
      try {
        await expect(
          bulkTransaction(db, 'sqlite', async (tx) => {
            await sql`create table half (n integer)`.execute(tx);
            throw new Error('fails part-way');
          }),
        ).rejects.toThrow('fails part-way');
        const { rows } = await sql<{ journal_mode: string }>`pragma journal_mode`.execute(db);
        expect(rows[0]?.journal_mode).toBe('wal');
        const { rows: tables } = await sql<{ name: string }>`
          select name from sqlite_master where name = 'half'`.execute(db);
        expect(tables).toEqual([]);
      } finally {
        await db.destroy();
      }
    } finally {
      await database.drop();
    }
  });

  it('refuses a process that opens the file meanwhile, with a clear error', async () => {
    const database = await createTestDatabase('sqlite');
    try {
      let opened: unknown;
      await modeIn(database.url);
      const { db } = await connect(database.url);
      try {
        await bulkTransaction(db, 'sqlite', async (tx) => {
          await sql`insert into probe values (2)`.execute(tx);
          opened = await connect(database.url).then(
            () => 'opened',
            (error: Error) => error.message,
          );
        });
      } finally {
        await db.destroy();
      }
      expect(opened).toMatch(/^cannot open the SQLite database .*database is locked \(another process is writing it/);
    } finally {
      await database.drop();
    }
  });

  it('succeeds when another process takes the write lock between its commit and the return to WAL', async () => {
    // That process opened the file while the write held it, waited for its commit (src/storage/db/journal.ts
    // takeWriteLock), and now writes: the return to WAL cannot have the file, and the committed write must not fail.
    const database = await createTestDatabase('sqlite');
    try {
      const path = database.url.slice('sqlite:'.length);
      await modeIn(database.url);
      const { db } = await connect(database.url);
      let other: Sqlite.Database | undefined;
      try {
        const result = await underBulkJournal(db, async () => {
          await db.transaction().execute(async (tx) => {
            await sql`insert into probe values (2)`.execute(tx);
          });
          other = new Sqlite(path);
          other.exec('begin immediate');
          return 'committed';
        });
        expect(result).toBe('committed');
        expect(other?.prepare('select count(*) as n from probe').get()).toEqual({ n: 2 });
        other?.exec('commit');
      } finally {
        other?.close();
        await db.destroy();
      }
      // The next connection to open the file sets WAL again.
      await (await connect(database.url)).db.destroy();
      expect(headerMode(path)).toBe('wal');
    } finally {
      await database.drop();
    }
  }, 20_000);

  it('writes the same import alone as beside a reader', async () => {
    const digests: Record<string, string>[] = [];
    for (const beside of [false, true]) {
      const database = await createTestDatabase('sqlite');
      const storage = await openStorage(database.url);
      const reader = beside ? await openStorage(database.url) : undefined;
      try {
        expect((await importRecords(storage, fixture)).problems).toEqual([]);
        // The key that signs cursors is random per database.
        const { server_secrets: _, ...rest } = await contentDigest('sqlite', database.url);
        digests.push(rest);
      } finally {
        await reader?.close();
        await storage.close();
        await database.drop();
      }
    }
    expect(digests[0]).toEqual(digests[1]);
    expect(Object.keys(digests[0] ?? {}).length).toBeGreaterThan(5);
  });
});
