// The asset list's counts from columns kept in memory (src/storage/read/assets/counts.ts) agree with SQL's count of the same
// filters (src/storage/read/assets/filters.ts), on both databases, for filter sets drawn at random over a generated inventory of two
// tenants; and the columns follow writes (a new data version) and step aside for tenants above their bound.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ListAssetsQuery } from '../../../../src/domain/assets.js';
import { providers, riskSeverities } from '../../../../src/domain/enums.js';
import { generateRecords } from '../../../../src/generate/generator.js';
import { openStorage, type Storage } from '../../../../src/storage/index.js';
import { importRecords, openTestStorage, TEST_DIALECTS, type TestStorage } from '../../../helpers.js';

const lines = [...generateRecords({ seed: 'counts', tenants: 2, assets: 150, findingsPerAsset: 3, risks: 0 })];
const assets = lines
  .map((l) => JSON.parse(l) as { kind: string; record: Record<string, unknown> })
  .filter((l) => l.kind === 'asset')
  .map((l) => l.record);
const tenants = [...new Set(assets.map((a) => String(a.tenantId)))];
const seen = (field: string) => [...new Set(assets.map((a) => a[field]).filter((v) => typeof v === 'string'))];

/** Drawn from the values the data holds, plus one it does not. */
const some = (values: readonly string[]) =>
  fc.uniqueArray(fc.constantFrom(...values, 'no-such-value'), { minLength: 1, maxLength: 3 });
const every = fc.record(
  {
    providers: fc.uniqueArray(fc.constantFrom(...providers), { minLength: 1, maxLength: 2 }),
    regions: some(seen('region')),
    resourceTypes: some(seen('type')),
    integrationIds: some(seen('integrationId')),
    severityLevels: fc.uniqueArray(fc.constantFrom(...riskSeverities), { minLength: 1, maxLength: 2 }),
    secretsLevels: fc.uniqueArray(fc.constantFrom(...riskSeverities), { minLength: 1, maxLength: 2 }),
    riskScoreGte: fc.integer({ min: 0, max: 100 }).map((n) => n / 10),
    operationalStates: fc.uniqueArray(fc.constantFrom('active', 'inactive'), { minLength: 1, maxLength: 2 }),
    hasAdminPrivileges: fc.boolean(),
    hasOverlyPermissivePrivileges: fc.boolean(),
    isSusceptibleToPrivilegeEscalation: fc.boolean(),
    hasKev: fc.boolean(),
    hasExploit: fc.boolean(),
    isExploitable: fc.boolean(),
    isPubliclyExposed: fc.boolean(),
    isVulnerable: fc.boolean(),
  },
  { requiredKeys: [] },
);
/** Zero to three filters: combinations of more rarely match anything in 150 assets. */
const filters = fc.tuple(every, fc.integer({ min: 0, max: 3 }), fc.integer()).map(([all, n, shift]) => {
  const names = Object.keys(all);
  const start = names.length === 0 ? 0 : Math.abs(shift) % names.length;
  const picked = [...names.slice(start), ...names.slice(0, start)].slice(0, n);
  return Object.fromEntries(picked.map((name) => [name, all[name as keyof typeof all]]));
});

const query = (extra: Partial<ListAssetsQuery>): ListAssetsQuery => ({
  page: 1,
  perPage: 1,
  sortBy: 'id',
  sortOrder: 'ASC',
  ...extra,
});

describe.each(TEST_DIALECTS)('asset counts from kept columns (%s)', (dialect) => {
  let db: TestStorage;
  let bySql: Storage;
  let byColumns: Storage;
  let statements: string[];

  beforeAll(async () => {
    db = await openTestStorage(dialect);
    const result = await importRecords(db.storage, lines.join('\n'));
    expect(result.problemCount).toBe(0);
    bySql = await openStorage(db.url, { countColumnsMaxRows: 0 });
    statements = [];
    byColumns = await openStorage(db.url, { onQuery: (s) => void statements.push(s) });
  }, 120_000);
  afterAll(async () => {
    await bySql.close();
    await byColumns.close();
    await db.dispose();
  });

  const total = async (storage: Storage, tenantId: string, extra: Partial<ListAssetsQuery>) =>
    (await storage.listAssets({ tenantId, dataVersion: 0 }, query(extra))).total;

  let probe = 0;
  /** Waits until a new filter set of the tenant is counted without a count statement: its columns are kept. */
  const columnsKept = async (tenantId: string): Promise<void> => {
    for (let attempt = 0; attempt < 500; attempt += 1) {
      statements.length = 0;
      probe += 1;
      await total(byColumns, tenantId, { riskScoreGte: probe / 1e9 });
      if (!statements.some((s) => /count\(/i.test(s))) return;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error(`the columns of ${tenantId} were never kept`);
  };

  it('agrees with SQL on random filter sets, tenant by tenant', async () => {
    for (const tenantId of tenants) await columnsKept(tenantId);
    let nonZero = 0;
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...tenants), filters, async (tenantId, f) => {
        const expected = await total(bySql, tenantId, f);
        if (expected > 0) nonZero += 1;
        expect(await total(byColumns, tenantId, f)).toBe(expected);
      }),
      { numRuns: 300, seed: 20261125 },
    );
    // The draws reach matches, not only empty results.
    expect(nonZero).toBeGreaterThan(30);
  });

  it('counts a new filter set of a known version without a count statement, and follows a write', async () => {
    const [tenantId] = tenants as [string];
    await columnsKept(tenantId);
    statements.length = 0;
    const before = await total(byColumns, tenantId, { providers: ['AWS'], riskScoreGte: 0.5 });
    expect(statements.filter((s) => /count\(/i.test(s))).toEqual([]);
    expect(before).toBe(await total(bySql, tenantId, { providers: ['AWS'], riskScoreGte: 0.5 }));
    // One more AWS asset with a score: a new data version, so new columns.
    const asset = { ...assets.find((a) => a.tenantId === tenantId && a.provider === 'AWS')! };
    const written = await importRecords(db.storage, [
      ['asset', { ...asset, id: `${String(asset.id)}-copy`, riskScore: 9.9 }],
    ]);
    expect(written.problemCount).toBe(0);
    // The first count of the new version is by SQL; the next ones from the new version's columns.
    expect(await total(byColumns, tenantId, { providers: ['AWS'], riskScoreGte: 0.5 })).toBe(before + 1);
    await columnsKept(tenantId);
    statements.length = 0;
    expect(await total(byColumns, tenantId, { providers: ['AWS'], riskScoreGte: 0.25 })).toBe(
      await total(bySql, tenantId, { providers: ['AWS'], riskScoreGte: 0.25 }),
    );
    expect(statements.filter((s) => /count\(/i.test(s))).toEqual([]);
  });

  it('counts by SQL, with the same result, a tenant larger than the bound', async () => {
    const small = await openStorage(db.url, { countColumnsMaxRows: 10 });
    try {
      for (const tenantId of tenants) {
        const f = { severityLevels: ['HIGH', 'CRITICAL'] as ('HIGH' | 'CRITICAL')[], isPubliclyExposed: true };
        expect(await total(small, tenantId, f)).toBe(await total(bySql, tenantId, f));
      }
    } finally {
      await small.close();
    }
  });
});
