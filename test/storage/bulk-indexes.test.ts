// A first import builds the secondary indexes of the tables it fills once, at its end (src/storage/bulk-indexes.ts):
// whatever happens to the run, the database keeps every index, and the data is what an import with the indexes in
// place would have written.
import { describe, expect, it } from 'vitest';
import { fixture } from '../fixtures.js';
import { importRecords, openTestStorage, TENANT_A, TEST_DIALECTS } from '../helpers.js';
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
