// Migrations are frozen in time: migrating an empty database one step at a time gives exactly the schema of the
// committed snapshot (taken from the schema the released versions built), on both databases, and migrating again
// changes nothing. To regenerate the snapshot after adding a migration, run this file with
// SECINV_WRITE_SCHEMA_SNAPSHOT=1 and review the diff of test/storage/schema-snapshot.json.
import { readFileSync, writeFileSync } from 'node:fs';
import { Kysely, Migrator, PostgresDialect, SqliteDialect } from 'kysely';
import Sqlite from 'better-sqlite3';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { migrations } from '../../src/storage/migrations/index.js';
import { createTestDatabase, TEST_DIALECTS, type TestDialect } from '../helpers.js';
import { introspectSchema, type Schema } from './introspect.js';

const SNAPSHOT = new URL('./schema-snapshot.json', import.meta.url);
const snapshot = JSON.parse(readFileSync(SNAPSHOT, 'utf8')) as Record<TestDialect, Schema>;
const written: Partial<Record<TestDialect, Schema>> = {};

const kysely = (dialect: TestDialect, url: string): Kysely<unknown> =>
  dialect === 'sqlite'
    ? new Kysely({ dialect: new SqliteDialect({ database: new Sqlite(url.slice('sqlite:'.length)) }) })
    : new Kysely({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 1 }) }) });

for (const dialect of TEST_DIALECTS) {
  describe(`migrations on ${dialect}`, () => {
    it('step by step from an empty database, they build the schema of the snapshot; again, they change nothing', async () => {
      const database = await createTestDatabase(dialect);
      const db = kysely(dialect, database.url);
      try {
        const migrator = new Migrator({ db, provider: migrations(dialect) });
        const names = Object.keys(await migrations(dialect).getMigrations());
        expect(names).toEqual([...names].sort());
        for (const name of names) {
          const { error, results } = await migrator.migrateUp();
          expect(error).toBeUndefined();
          expect(results?.map((r) => [r.migrationName, r.status])).toEqual([[name, 'Success']]);
        }
        const schema = await introspectSchema(dialect, database.url);
        if (process.env.SECINV_WRITE_SCHEMA_SNAPSHOT === '1') written[dialect] = schema;
        else expect(schema).toEqual(snapshot[dialect]);

        const again = await migrator.migrateToLatest();
        expect([again.error, again.results]).toEqual([undefined, []]);
        expect(await introspectSchema(dialect, database.url)).toEqual(schema);
      } finally {
        await db.destroy();
        await database.drop();
      }
    });
  });
}

if (process.env.SECINV_WRITE_SCHEMA_SNAPSHOT === '1') {
  describe('snapshot', () => {
    it('is written', () => {
      expect(Object.keys(written).sort()).toEqual(['postgres', 'sqlite']);
      writeFileSync(SNAPSHOT, `${JSON.stringify(written, null, 2)}\n`);
    });
  });
}
