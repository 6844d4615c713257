// Numbered vulnerability pages that start from a list's kept rungs (src/storage/read/vulnerabilities/ladder.ts) list
// what the list read to its end in keyset batches lists at their offsets, on both databases: pages drawn at random in
// any order, past the end too, for every sort and direction, with and without filters, before and after a write (a
// new data version, whose rungs are not those of the old one). Rungs of 7 findings, so that ~900 findings make a
// ladder of a hundred rungs.
import fc from 'fast-check';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ListVulnerabilitiesQuery } from '../../../../src/domain/vulnerabilities.js';
import { generateRecords } from '../../../../src/generate/generator.js';
import { connect } from '../../../../src/storage/db/connect.js';
import { sqlDialects } from '../../../../src/storage/db/dialect.js';
import { vulnerabilityStore } from '../../../../src/storage/read/vulnerabilities/list.js';
import { tenantReader } from '../../../../src/storage/tx/read.js';
import type { Database } from '../../../../src/storage/db/tables.js';
import type { FindingPosition, Storage } from '../../../../src/storage/types.js';
import { importRecords, openTestStorage, TEST_DIALECTS, type TestStorage } from '../../../helpers.js';

const RUNG = 7;

/** The generated inventory; `moved`: every third finding last observed at another time. */
function inventory(moved = false): string {
  let i = 0;
  return [...generateRecords({ seed: 'ladder', tenants: 1, assets: 110, findingsPerAsset: 8, risks: 0 })]
    .map((line) => {
      const { kind, record } = JSON.parse(line) as { kind: string; record: Record<string, unknown> };
      if (kind === 'vulnerability' && moved && i++ % 3 === 0)
        record.lastObservedAt = new Date(Date.UTC(2026, 10, 1 + (i % 29))).toISOString();
      return JSON.stringify({ kind, record });
    })
    .join('\n');
}

const sortFields = ['severityLevelValue', 'lastObservedAt', 'firstObservedAt', 'hasKev', 'hasExploit'] as const;
type Listed = Omit<ListVulnerabilitiesQuery, 'page' | 'perPage' | 'includeTotal'>;
const FILTERS = [
  { isExempted: false },
  { isExempted: true },
  { isExempted: false, severityLevels: ['HIGH', 'CRITICAL'] },
  { isExempted: false, hasKev: false },
] as const;
const walks = fc.record({
  sortBy: fc.constantFrom(...sortFields),
  sortOrder: fc.constantFrom('ASC' as const, 'DESC' as const),
  perPage: fc.constantFrom(1, 6, 7, 8, 25, 100),
  filters: fc.constantFrom(...FILTERS),
  // Thousandths of the list: pages mostly within it, some past its end.
  at: fc.array(fc.integer({ min: 0, max: 1100 }), { minLength: 1, maxLength: 6 }),
});

describe.each(TEST_DIALECTS)('vulnerability pages from kept rungs (%s)', (dialect) => {
  let db: TestStorage;
  let raw: Kysely<Database>;
  let tenantId: string;
  let laddered: Pick<Storage, 'listVulnerabilities'>;

  beforeAll(async () => {
    db = await openTestStorage(dialect);
    expect((await importRecords(db.storage, inventory())).problems).toEqual([]);
    tenantId = (await db.storage.listTenants())[0]!.tenantId;
    raw = (await connect(db.url)).db;
    laddered = vulnerabilityStore(tenantReader(raw, dialect), sqlDialects[dialect], 0, RUNG);
  }, 120_000);
  afterAll(async () => {
    await raw.destroy();
    await db.dispose();
  });

  const scope = () => ({ tenantId, dataVersion: 0 });
  const texts = (items: Buffer[]) => items.map((item) => item.toString());

  /** The whole list, read in keyset batches (no offset, so no rung). */
  async function whole(q: Listed): Promise<string[]> {
    const all: string[] = [];
    let after: FindingPosition | undefined;
    for (;;) {
      const batch = await db.storage.listVulnerabilities(
        scope(),
        { ...q, page: 1, perPage: 1000, includeTotal: false },
        after,
      );
      all.push(...texts(batch.items));
      if (batch.next === null) return all;
      after = batch.next;
    }
  }

  const checkWalks = () =>
    fc.assert(
      fc.asyncProperty(walks, async ({ sortBy, sortOrder, perPage, filters, at }) => {
        const q: Listed = { sortBy, sortOrder, ...filters, severityLevels: undefined };
        if ('severityLevels' in filters) q.severityLevels = [...filters.severityLevels];
        const list = await whole(q);
        for (const thousandths of at) {
          const page = Math.floor((thousandths * list.length) / 1000 / perPage) + 1;
          const result = await laddered.listVulnerabilities(
            scope(),
            { ...q, page, perPage, includeTotal: true },
            undefined,
          );
          const offset = (page - 1) * perPage;
          expect(texts(result.items), JSON.stringify({ ...q, page, perPage })).toEqual(
            list.slice(offset, offset + perPage),
          );
          expect(result.total).toBe(list.length);
        }
      }),
      { numRuns: 60, seed: 20261203 },
    );

  it('lists what the whole list holds at the offset, for pages visited in any order', async () => {
    // The drawn pages reach far past the first rungs.
    expect(
      (await whole({ sortBy: 'severityLevelValue', sortOrder: 'DESC', isExempted: false })).length,
    ).toBeGreaterThan(100 * RUNG);
    await checkWalks();
  }, 120_000);

  it('lists the new order after a write', async () => {
    const q: ListVulnerabilitiesQuery = {
      sortBy: 'lastObservedAt',
      sortOrder: 'DESC',
      page: 40,
      perPage: 9,
      isExempted: false,
      includeTotal: true,
    };
    const before = texts((await laddered.listVulnerabilities(scope(), q, undefined)).items);
    expect(before).toEqual((await whole(q)).slice(39 * 9, 40 * 9));
    // A third of the findings move in the order: most of the list's rungs now fall on other findings.
    expect((await importRecords(db.storage, inventory(true))).problems).toEqual([]);
    const after = texts((await laddered.listVulnerabilities(scope(), q, undefined)).items);
    expect(after).toEqual((await whole(q)).slice(39 * 9, 40 * 9));
    expect(after).not.toEqual(before);
    await checkWalks();
  }, 120_000);
});
