// The databases most tests open are copies of one migrated template per run (test/global-setup.ts). A copy must be what
// migrating an empty database makes: the same tables, columns, indexes, constraints, policies and storage settings,
// and the same migrations recorded.
import Sqlite from 'better-sqlite3';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { openStorage } from '../../src/storage/index.js';
import { createTestDatabase, openTestStorage, TEST_DIALECTS, type TestDialect } from '../helpers.js';

const POSTGRES_SCHEMA = [
  `select table_name, column_name, data_type, is_nullable, column_default from information_schema.columns
   where table_schema = current_schema() order by 1, 2`,
  `select tablename, indexdef from pg_indexes where schemaname = current_schema() order by 1, 2`,
  `select conrelid::regclass::text as "table", conname, pg_get_constraintdef(oid) as definition from pg_constraint
   where connamespace = current_schema()::regnamespace order by 1, 2`,
  `select tablename, policyname, roles::text, cmd, qual, with_check from pg_policies order by 1, 2`,
  `select relname, relkind, reloptions::text, relrowsecurity, relforcerowsecurity, relacl::text from pg_class
   where relnamespace = current_schema()::regnamespace order by 1`,
  `select name from kysely_migration order by name`,
];

async function schema(dialect: TestDialect, url: string): Promise<unknown[]> {
  if (dialect === 'sqlite') {
    const db = new Sqlite(url.slice('sqlite:'.length), { readonly: true });
    try {
      return [
        db.prepare('select type, name, tbl_name, sql from sqlite_master order by name').all(),
        db.prepare('select name from kysely_migration order by name').all(),
        db.pragma('journal_mode', { simple: true }),
        db.pragma('page_size', { simple: true }),
        db.pragma('auto_vacuum', { simple: true }),
      ];
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const results: unknown[] = [];
    for (const text of POSTGRES_SCHEMA) results.push((await client.query(text)).rows);
    return results;
  } finally {
    await client.end();
  }
}

describe.each(TEST_DIALECTS)('a test database copied from the migrated template on %s', (dialect) => {
  it('has the schema and the migrations that migrating an empty database gives', async () => {
    const empty = await createTestDatabase(dialect);
    const copied = await openTestStorage(dialect);
    try {
      const fresh = await openStorage(empty.url);
      await fresh.close();
      const expected = await schema(dialect, empty.url);
      expect((expected[1] as unknown[]).length).toBeGreaterThan(10);
      expect(await schema(dialect, copied.url)).toEqual(expected);
    } finally {
      await copied.dispose();
      await empty.drop();
    }
  });
});
