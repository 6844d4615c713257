// A first import builds the secondary indexes of the tables it fills once, at its end (src/storage/bulk-indexes.ts):
// whatever happens to the run, the database keeps every index, and the data is what an import with the indexes in
// place would have written.
import { sql } from 'kysely';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { deferIndexes } from '../../src/storage/bulk-indexes.js';
import { connect } from '../../src/storage/connect.js';
import { fixture } from '../fixtures.js';
import { createTestDatabase, importRecords, openTestStorage, TENANT_A, TEST_DIALECTS } from '../helpers.js';
import { introspectSchema } from './introspect.js';

for (const dialect of TEST_DIALECTS) {
  describe(`bulk indexes on ${dialect}`, () => {
    it('a first import, a dry run and a failed import all leave the schema as the migrations built it', async () => {
      const opened = await openTestStorage(dialect);
      try {
        const before = await introspectSchema(dialect, opened.url);
        expect((await importRecords(opened.storage, fixture, true)).problems).toEqual([]);
        expect(await introspectSchema(dialect, opened.url)).toEqual(before);

        const broken = [...fixture, ['asset', { id: 'half-written' }] as (typeof fixture)[number]];
        expect((await importRecords(opened.storage, broken)).problemCount).toBeGreaterThan(0);
        expect(await introspectSchema(dialect, opened.url)).toEqual(before);
        const scope = { tenantId: TENANT_A, dataVersion: 0 };
        expect((await opened.storage.listAssets(scope, { page: 1, perPage: 10 })).total).toBe(0);

        expect((await importRecords(opened.storage, fixture)).problems).toEqual([]);
        expect(await introspectSchema(dialect, opened.url)).toEqual(before);
        // Again into tables that are no longer empty: the indexes are kept and maintained row by row.
        expect((await importRecords(opened.storage, fixture)).problems).toEqual([]);
        expect(await introspectSchema(dialect, opened.url)).toEqual(before);
        const kev = await opened.storage.listAssets({ tenantId: TENANT_A, dataVersion: 2 }, {
          page: 1,
          perPage: 100,
          hasKev: true,
          sortBy: 'vulnerabilityScore',
          sortOrder: 'DESC',
        } as never);
        expect(kev.total).toBeGreaterThan(0);
        expect(kev.items).toHaveLength(kev.total);
      } finally {
        await opened.dispose();
      }
    });
  });
}

if (TEST_DIALECTS.includes('postgres'))
  describe('bulk indexes on postgres, beside other sessions', () => {
    /** How many secondary indexes the findings table has inside a transaction that deferred them, then after. */
    const deferredIn = async (url: string) => {
      const { db } = await connect(url);
      const count = async (q: typeof db) =>
        Number(
          (
            await sql<{ n: string }>`select count(*) as n from pg_indexes
              where tablename = 'vulnerabilities' and indexname <> 'vulnerabilities_pkey'`.execute(q)
          ).rows[0]?.n,
        );
      try {
        const before = await count(db);
        let during = -1;
        await db.transaction().execute(async (tx) => {
          const rebuild = await deferIndexes(tx, 'postgres');
          during = await count(tx);
          await rebuild();
          expect(await count(tx)).toBe(before);
        });
        return { before, during, after: await count(db) };
      } finally {
        await db.destroy();
      }
    };

    it('drops and rebuilds them when the import is alone, and keeps them while another session is connected', async () => {
      const database = await createTestDatabase('postgres');
      try {
        // Migrated, then closed: the next connection is the only one.
        await (await connect(database.url)).db.destroy();
        const alone = await deferredIn(database.url);
        expect(alone.before).toBeGreaterThan(5);
        expect(alone).toEqual({ before: alone.before, during: 0, after: alone.before });

        const other = new pg.Client({ connectionString: database.url });
        await other.connect();
        try {
          expect(await deferredIn(database.url)).toEqual({
            before: alone.before,
            during: alone.before,
            after: alone.before,
          });
        } finally {
          await other.end();
        }
      } finally {
        await database.drop();
      }
    });
  });
