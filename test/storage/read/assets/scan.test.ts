// SQLite: an asset count under several kept-column filters reads the table in one pass when the tenant holds most of
// it (src/storage/read/assets/scan.ts); any other count, and any tenant beside a larger one, is read as the planner chooses.
// Either way the total is the number of assets the list returns.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ListAssetsQuery } from '../../../../src/domain/assets.js';
import { generateRecords } from '../../../../src/generate/generator.js';
import { openStorage, type Storage } from '../../../../src/storage/index.js';
import { importRecords, openTestStorage, type TestStorage } from '../../../helpers.js';

const generated = (seed: string, assets: number) => [
  ...generateRecords({ seed, tenants: 1, assets, findingsPerAsset: 2, risks: 0 }),
];
const large = generated('scan-large', 240);
const small = generated('scan-small', 12);
const tenantOf = (lines: string[]) => (JSON.parse(lines[0]!) as { record: { tenantId: string } }).record.tenantId;

const FILTER_SETS: Partial<ListAssetsQuery>[] = [
  { providers: ['AWS'], severityLevels: ['CRITICAL', 'HIGH'] },
  { providers: ['AWS', 'GCP'], isPubliclyExposed: true },
  { severityLevels: ['LOW'], riskScoreGte: 0.5, hasKev: false },
  { regions: ['us-east-1', 'eu-west-1'], isVulnerable: true },
];

describe('asset counts on SQLite: one pass over the table, or the planner', () => {
  let opened: TestStorage;
  let storage: Storage;
  let statements: string[];

  beforeAll(async () => {
    opened = await openTestStorage('sqlite');
    for (const lines of [large, small])
      expect((await importRecords(opened.storage, lines.join('\n'))).problemCount).toBe(0);
    statements = [];
    // No kept columns: every count is SQL's.
    storage = await openStorage(opened.url, { countColumnsMaxRows: 0, onQuery: (s) => void statements.push(s) });
  }, 120_000);
  afterAll(async () => {
    await storage.close();
    await opened.dispose();
  });

  const list = async (tenantId: string, filters: Partial<ListAssetsQuery>) => {
    statements.length = 0;
    const query = { page: 1, perPage: 1000, sortBy: 'id', sortOrder: 'ASC', ...filters } as ListAssetsQuery;
    const page = await storage.listAssets({ tenantId, dataVersion: 0 }, query);
    const counts = statements.filter((s) => /select count\(\*\) as "n" from "assets"/.test(s));
    expect(counts).toHaveLength(1);
    return { page, scanned: counts[0]!.includes('from "assets" not indexed where') };
  };

  it('reads the table in one pass for a tenant holding most of it, under two filters or more', async () => {
    let matched = 0;
    for (const filters of FILTER_SETS) {
      const { page, scanned } = await list(tenantOf(large), filters);
      expect(scanned).toBe(true);
      expect(page.total).toBe(page.items.length);
      matched += page.total;
    }
    expect(matched).toBeGreaterThan(20);
  });

  it('leaves to the planner one filter, an ids list, and a tenant beside a larger one; the totals still agree', async () => {
    const ids = large
      .map((l) => JSON.parse(l) as { kind: string; record: { id: string } })
      .filter((l) => l.kind === 'asset')
      .slice(0, 5)
      .map((l) => l.record.id);
    for (const [tenantId, filters] of [
      [tenantOf(large), { providers: ['AWS'] }],
      [tenantOf(large), { ids, providers: ['AWS', 'Azure', 'GCP', 'Kubernetes'] }],
      ...FILTER_SETS.map((f) => [tenantOf(small), f] as const),
    ] as [string, Partial<ListAssetsQuery>][]) {
      const { page, scanned } = await list(tenantId, filters);
      expect(scanned).toBe(false);
      expect(page.total).toBe(page.items.length);
    }
  });

  it('reads the kept columns of a tenant holding most of the table in rowid order, of a small one by id', async () => {
    const read: string[] = [];
    const all: string[] = [];
    const byColumns = await openStorage(opened.url, {
      onQuery: (s) => {
        read.push(s);
        all.push(s);
      },
    });
    try {
      for (const [lines, order] of [
        [large, 'order by assets.rowid'],
        [small, 'order by assets.id'],
      ] as const) {
        const tenantId = tenantOf(lines);
        all.length = 0;
        // The first count starts the read of the columns; a later one is answered from them, with no count statement.
        // Each asks a new filter set (an unseen riskScoreGte), which no count cached answers.
        let counted = true;
        for (let attempt = 1; counted && attempt < 500; attempt += 1) {
          const filters = { providers: ['AWS'], riskScoreGte: attempt / 1e6 } as Partial<ListAssetsQuery>;
          const expected = (await list(tenantId, filters)).page.total;
          read.length = 0;
          const query = { page: 1, perPage: 1, sortBy: 'id', sortOrder: 'ASC', ...filters } as ListAssetsQuery;
          expect((await byColumns.listAssets({ tenantId, dataVersion: 0 }, query)).total).toBe(expected);
          counted = read.some((s) => /count\(/i.test(s));
          if (counted) await new Promise((resolve) => setTimeout(resolve, 20));
        }
        expect(counted).toBe(false);
        const batches = all.filter((s) => s.includes('"n_critical_secrets"') && s.includes('order by'));
        expect(batches.length).toBeGreaterThan(0);
        expect(batches.every((s) => s.includes(order))).toBe(true);
      }
    } finally {
      await byColumns.close();
    }
  });
});

describe('the kept columns of a large tenant on SQLite', () => {
  it('are read in batches between which the event loop turns', async () => {
    const opened = await openTestStorage('sqlite');
    const log: string[] = [];
    const tick = setInterval(() => log.push('tick'), 1);
    try {
      // Two batches of the read (5,000 rows each), no findings.
      const lines = generated('scan-batches', 5_100).filter((l) => !l.includes('"kind":"vulnerability"'));
      expect((await importRecords(opened.storage, lines.join('\n'))).problemCount).toBe(0);
      const storage = await openStorage(opened.url, {
        onQuery: (s) => void (s.includes('"n_critical_secrets"') && s.includes('order by') && log.push('batch')),
      });
      try {
        const tenantId = tenantOf(lines);
        const count = (n: number) =>
          storage.listAssets(
            { tenantId, dataVersion: 0 },
            {
              page: 1,
              perPage: 1,
              sortBy: 'id',
              sortOrder: 'ASC',
              riskScoreGte: n / 1e6,
            },
          );
        await count(0);
        for (let n = 1; log.filter((e) => e === 'batch').length < 2 && n < 500; n += 1) {
          await new Promise((resolve) => setTimeout(resolve, 20));
          await count(n);
        }
        const batches = log.flatMap((e, i) => (e === 'batch' ? [i] : []));
        expect(batches).toHaveLength(2);
        expect(log.slice(batches[0], batches[1])).toContain('tick');
      } finally {
        await storage.close();
      }
    } finally {
      clearInterval(tick);
      await opened.dispose();
    }
  }, 120_000);
});
