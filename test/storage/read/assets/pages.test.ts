// Numbered asset pages that start from kept positions (src/storage/read/assets/pages.ts) list what an offset over the whole
// order lists, on both databases: pages drawn at random in any order, for every sort and direction, with ties and
// nulls, with and without filters, before and after writes (a new data version).
import fc from 'fast-check';
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sortableAssetFields, type ListAssetsQuery } from '../../../../src/domain/assets.js';
import { generateRecords } from '../../../../src/generate/generator.js';
import { filterExpressions, sortColumns, type AssetFilters } from '../../../../src/storage/read/assets/filters.js';
import { connect } from '../../../../src/storage/db/connect.js';
import { sqlDialects } from '../../../../src/storage/db/dialect.js';
import { fromTenant } from '../../../../src/storage/tx/tenant.js';
import type { Database } from '../../../../src/storage/db/tables.js';
import type { Dialect } from '../../../../src/storage/types.js';
import { importRecords, openTestStorage, TEST_DIALECTS, type TestStorage } from '../../../helpers.js';

type Line = { kind: string; record: Record<string, unknown> };

/** Generated assets with nulls in every nullable sort column and ties in the text ones. */
function inventory(seed: string, assets: number, vary = (_record: Record<string, unknown>, _i: number) => {}): string {
  const lines = [...generateRecords({ seed, tenants: 1, assets, findingsPerAsset: 2, risks: 0 })].map(
    (l) => JSON.parse(l) as Line,
  );
  let i = 0;
  for (const { kind, record } of lines) {
    if (kind !== 'asset') continue;
    if (i % 5 === 1) Object.assign(record, { name: null, region: null, service: null, executionId: null });
    if (i % 7 === 2) Object.assign(record, { name: 'same name', region: 'us-east-1', riskScore: 5 });
    vary(record, i);
    i += 1;
  }
  return lines.map((l) => JSON.stringify(l)).join('\n');
}

const FILTERS: AssetFilters[] = [{}, { providers: ['AWS'] }, { severityLevels: ['HIGH', 'CRITICAL'] }];

/** The page as a plain offset over the whole order would give it: the query the list ran before kept positions. */
async function byOffset(db: Kysely<Database>, dialect: Dialect, tenantId: string, q: ListAssetsQuery) {
  const { sortBy = 'id', sortOrder = 'ASC', page, perPage, ...filters } = q;
  const { column, nullable } = sortColumns[sortBy];
  const direction = sortOrder === 'DESC' ? 'desc' : 'asc';
  let select = fromTenant(db, 'assets', tenantId)
    .where((eb) => eb.and(filterExpressions(eb, tenantId, filters, sqlDialects[dialect], 'probe')))
    .select('assets.id');
  if (nullable) {
    // Nulls last in either direction, spelled the same on both databases (a boolean sorts false first on both).
    select = select
      .orderBy(sql`${sql.ref(`assets.${column}`)} is null`)
      .orderBy(column, direction)
      .orderBy('assets.id', direction);
  } else {
    select = select.orderBy(column, direction);
    if (column !== 'id') select = select.orderBy('assets.id', direction);
  }
  const rows = await select
    .limit(perPage)
    .offset((page - 1) * perPage)
    .execute();
  return rows.map((r) => r.id);
}

describe.each(TEST_DIALECTS)('asset pages from kept positions (%s)', (dialect) => {
  let db: TestStorage;
  let raw: Kysely<Database>;
  let tenantId: string;

  beforeAll(async () => {
    db = await openTestStorage(dialect);
    expect((await importRecords(db.storage, inventory('pages', 140))).problems).toEqual([]);
    tenantId = (await db.storage.listTenants())[0]!.tenantId;
    raw = (await connect(db.url)).db;
  }, 120_000);
  afterAll(async () => {
    await raw.destroy();
    await db.dispose();
  });

  const listed = async (q: ListAssetsQuery) =>
    (await db.storage.listAssets({ tenantId, dataVersion: 0 }, q)).items.map(
      (item) => (JSON.parse(item.toString()) as { id: string }).id,
    );

  const walks = fc.record({
    sortBy: fc.constantFrom(...sortableAssetFields),
    sortOrder: fc.constantFrom('ASC' as const, 'DESC' as const),
    perPage: fc.integer({ min: 1, max: 30 }),
    filters: fc.constantFrom(...FILTERS),
    pages: fc.array(fc.integer({ min: 1, max: 150 }), { minLength: 1, maxLength: 8 }),
  });

  const checkWalks = () =>
    fc.assert(
      fc.asyncProperty(walks, async ({ sortBy, sortOrder, perPage, filters, pages }) => {
        // Pages past the end are drawn too (an empty page), but mostly within it.
        for (const drawn of pages) {
          const page = drawn % (Math.ceil(150 / perPage) + 1) || 1;
          const q = { sortBy, sortOrder, perPage, page, ...filters };
          expect(await listed(q), JSON.stringify(q)).toEqual(await byOffset(raw, dialect, tenantId, q));
        }
      }),
      { numRuns: 60 },
    );

  it('lists what an offset lists, for pages visited in any order', checkWalks, 120_000);

  it('lists the new order after writes change it', async () => {
    // Every deep page of every sort is kept by now; a write moves names, scores and regions, and adds assets.
    const q: ListAssetsQuery = { sortBy: 'name', sortOrder: 'DESC', perPage: 7, page: 9 };
    expect(await listed(q)).toEqual(await byOffset(raw, dialect, tenantId, q));
    const moved = inventory('pages', 150, (record, i) => {
      if (i % 3 === 0) Object.assign(record, { name: `renamed ${i % 11}`, riskScore: i % 4 === 0 ? null : i % 10 });
      if (i % 4 === 1) record.region = null;
    });
    expect((await importRecords(db.storage, moved)).problems).toEqual([]);
    expect(await listed(q)).toEqual(await byOffset(raw, dialect, tenantId, q));
    await checkWalks();
  }, 120_000);
});
