// A server's SQLite connections leave the WAL's pages to its scan runner, which copies them into the file while idle
// (docs/DESIGN.md §118): a commit that fills the WAL past 1,000 pages does not copy them itself then, as SQLite's own
// checkpoint would, for seconds after a large scan. Pages reach the database file only through a checkpoint, so the
// file's size tells whether one ran.
import { statSync } from 'node:fs';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { connect } from '../../../src/storage/db/connect.js';
import { defaultConnectOptions } from '../../../src/storage/db/connection.js';
import { checkpoint } from '../../../src/storage/db/journal.js';
import { createTestDatabase } from '../../helpers.js';

/** 1,500 rows of 12 KB: a page of 16 KB each, past the 1,000 pages at which SQLite checkpoints at a commit. */
const LARGE_WRITE = sql`with recursive n(i) as (select 1 union all select i + 1 from n where i < 1500)
  insert into probe select randomblob(12000) from n`;
const WRITTEN_BYTES = 1500 * 12000;

async function fileGrowth(checkpointAtCommit: boolean) {
  const database = await createTestDatabase('sqlite');
  const path = database.url.slice('sqlite:'.length);
  const { db } = await connect(database.url, { ...defaultConnectOptions, checkpointAtCommit });
  try {
    await sql`create table probe (b blob)`.execute(db);
    await checkpoint(db, 'sqlite');
    const before = statSync(path).size;
    await LARGE_WRITE.execute(db);
    const atCommit = statSync(path).size - before;
    await checkpoint(db, 'sqlite');
    return { atCommit, afterCheckpoint: statSync(path).size - before };
  } finally {
    await db.destroy();
    await database.drop();
  }
}

describe('checkpoints of the SQLite WAL', () => {
  it('a connection left as SQLite sets it copies a large write into the file at its commit', async () => {
    const growth = await fileGrowth(true);
    expect(growth.atCommit).toBeGreaterThanOrEqual(WRITTEN_BYTES);
    expect(growth.afterCheckpoint).toBe(growth.atCommit);
  });

  it('with checkpointAtCommit false the write stays in the WAL until a checkpoint copies it', async () => {
    const growth = await fileGrowth(false);
    expect(growth.atCommit).toBe(0);
    expect(growth.afterCheckpoint).toBeGreaterThanOrEqual(WRITTEN_BYTES);
  });
});
