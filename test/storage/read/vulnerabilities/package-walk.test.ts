// A package-filtered vulnerability page walks the list's sort index when the matches are dense enough
// (src/storage/read/vulnerabilities/list.ts, walkForPackages) and starts from the matching packages otherwise. Both plans must
// give the same page, total and next position: checked on both databases against a store that never walks, for
// numbered pages and keyset batches drawn at random over a generated inventory, and for a walk that falls short where
// the matches cluster late in the sort order.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ListVulnerabilitiesQuery } from '../../../../src/domain/vulnerabilities.js';
import { generateRecords } from '../../../../src/generate/generator.js';
import { openStorage, type Storage } from '../../../../src/storage/index.js';
import type { FindingPosition } from '../../../../src/storage/types.js';
import { PACKAGE_WALK_ROWS } from '../../../../src/storage/read/vulnerabilities/list.js';
import { importRecords, openTestStorage, TEST_DIALECTS, type TestStorage } from '../../../helpers.js';

const lines = [...generateRecords({ seed: 'walk', tenants: 2, assets: 120, findingsPerAsset: 8, risks: 0 })];
const records = lines.map((l) => JSON.parse(l) as { kind: string; record: Record<string, unknown> });
const tenants = records.filter((r) => r.kind === 'tenant').map((r) => String(r.record.tenantId));
const packageNames = new Map<string, number>();
for (const { kind, record } of records) {
  if (kind !== 'vulnerability') continue;
  for (const p of record.packages as { packageName?: string }[])
    if (p.packageName) packageNames.set(p.packageName, (packageNames.get(p.packageName) ?? 0) + 1);
}
// The commonest names (dense matches: the walk), some rare ones (the other plan), and one no finding has.
const byCount = [...packageNames].sort((a, b) => b[1] - a[1]).map(([name]) => name);
const names = [...byCount.slice(0, 4), ...byCount.slice(-3), 'no-such-package'];

const sortFields = ['severityLevelValue', 'lastObservedAt', 'firstObservedAt', 'hasKev', 'hasExploit'] as const;
const draws = fc.record({
  tenantId: fc.constantFrom(...tenants),
  packageName: fc.constantFrom(...names),
  targetClass: fc.option(
    fc.constantFrom(['os-pkgs'], ['lang-pkgs'], ['os-pkgs', 'lang-pkgs']).map((classes) => [...classes]),
    { nil: undefined },
  ),
  // Few findings are exempted: mostly the default.
  isExempted: fc.constantFrom(false, false, false, true),
  sortBy: fc.constantFrom(...sortFields),
  sortOrder: fc.constantFrom('ASC' as const, 'DESC' as const),
  perPage: fc.constantFrom(1, 3, 25),
  page: fc.integer({ min: 1, max: 4 }),
});

type Draw = typeof draws extends fc.Arbitrary<infer T> ? T : never;
const query = ({ tenantId: _t, targetClass, ...d }: Draw, includeTotal: boolean): ListVulnerabilitiesQuery => ({
  ...d,
  ...(targetClass === undefined ? {} : { targetClass }),
  includeTotal,
});
const page = async (storage: Storage, d: Draw, after?: FindingPosition) => {
  const result = await storage.listVulnerabilities(
    { tenantId: d.tenantId, dataVersion: 0 },
    query(d, after === undefined),
    after,
  );
  return { items: result.items.map((b) => b.toString()), total: result.total, next: result.next };
};

/**
 * A tenant of one asset with 40 HIGH findings of package `early` and 5 LOW findings of package `late`: sorted by
 * severity, every match of `late` comes after the walk's estimated reach.
 */
function clustered(): string[] {
  const template = records.find((r) => r.kind === 'vulnerability')!.record;
  const tenant = records.find((r) => r.kind === 'tenant' && r.record.tenantId === template.tenantId)!.record;
  const asset = records.find((r) => r.kind === 'asset' && r.record.id === template.assetId)!.record;
  const tenantId = '33333333-3333-4333-8333-333333333333';
  const finding = (n: number, severityLevel: string, packageName: string) => ({
    kind: 'vulnerability',
    record: {
      ...template,
      tenantId,
      vulnerabilityId: `CVE-2099-${String(n).padStart(4, '0')}`,
      severityLevel,
      packages: [{ packageName, targetName: 'x', targetType: 'jar', targetClass: 'lang-pkgs' }],
    },
  });
  return [
    { kind: 'tenant', record: { ...tenant, tenantId } },
    { kind: 'asset', record: { ...asset, tenantId } },
    ...Array.from({ length: 40 }, (_, i) => finding(i, 'HIGH', 'early')),
    ...Array.from({ length: 5 }, (_, i) => finding(40 + i, 'LOW', 'late')),
  ].map((line) => JSON.stringify(line));
}

describe.each(TEST_DIALECTS)('package-filtered pages, walked or not (%s)', (dialect) => {
  let db: TestStorage;
  let never: Storage;
  let walking: Storage;
  let barely: Storage;
  const statements: string[] = [];

  beforeAll(async () => {
    db = await openTestStorage(dialect);
    const result = await importRecords(db.storage, [...lines, ...clustered()].join('\n'));
    expect(result.problemCount).toBe(0);
    never = await openStorage(db.url, { packageWalkRows: 0 });
    // The default bound (SQLite's; PostgreSQL does not walk by default, but the walk must be right there too).
    walking = await openStorage(db.url, {
      packageWalkRows: PACKAGE_WALK_ROWS,
      onQuery: (s) => void statements.push(s),
    });
    // Walks only while the reach is within twice the matches: where matches cluster late, the walk falls short.
    barely = await openStorage(db.url, { packageWalkRows: 1, onQuery: (s) => void statements.push(s) });
  }, 120_000);
  afterAll(async () => {
    await never.close();
    await walking.close();
    await barely.close();
    await db.dispose();
  });

  const walked = () => statements.some((s) => /\) as "w"/.test(s));
  // The page's statement of the plan that starts from the packages (a count has no order): the distinct keys of the
  // matching packages joined to their findings on SQLite, an `in` list of them on PostgreSQL.
  const fromPackages = () =>
    statements.some((s) => /(in \(select|as "k" cross join)/.test(s) && /order by/.test(s) && !/as "w"/.test(s));

  it('numbered pages are the same by either plan, and both plans are taken', async () => {
    let walks = 0;
    let others = 0;
    let nonEmpty = 0;
    await fc.assert(
      fc.asyncProperty(draws, async (d) => {
        const expected = await page(never, d);
        if (expected.items.length > 0) nonEmpty += 1;
        for (const storage of [walking, barely]) {
          statements.length = 0;
          expect(await page(storage, d)).toEqual(expected);
          if (walked()) walks += 1;
          else if (fromPackages()) others += 1;
        }
      }),
      { numRuns: 150, seed: 20261126 },
    );
    // The draws reach matches, and each plan answers a good share of them.
    expect(nonEmpty).toBeGreaterThan(40);
    expect(walks).toBeGreaterThan(40);
    expect(others).toBeGreaterThan(40);
  });

  it('a walk that falls short of the page gives way to the other plan', async () => {
    // perPage 1: the reach is 2 × 2 × 45 / 5 = 36 findings, all HIGH and `early`.
    const short = await openStorage(db.url, { packageWalkRows: 40, onQuery: (s) => void statements.push(s) });
    try {
      const d: Draw = {
        tenantId: '33333333-3333-4333-8333-333333333333',
        packageName: 'late',
        targetClass: undefined,
        isExempted: false,
        sortBy: 'severityLevelValue',
        sortOrder: 'DESC',
        perPage: 1,
        page: 1,
      };
      statements.length = 0;
      const got = await page(short, d);
      expect(walked() && fromPackages()).toBe(true);
      expect(got).toEqual(await page(never, d));
      expect(got.total).toBe(5);
      // Ties in the sort go by id in its direction: the last id first.
      expect(JSON.parse(got.items[0]!)).toMatchObject({ severityLevel: 'LOW', vulnerabilityId: 'CVE-2099-0044' });
    } finally {
      await short.close();
    }
  });

  it('a package filter counts the findings its list holds, with and without the exempted ones', async () => {
    // The count of package filters alone reads the package index and takes away the exempted matches
    // (src/storage/read/vulnerabilities/list.ts, countOf): checked against the list read to its end.
    const listed = async (d: Draw) => {
      let n = 0;
      let after: FindingPosition | undefined;
      for (;;) {
        const got = await page(never, { ...d, perPage: 25 }, after);
        n += got.items.length;
        if (got.next === null) return n;
        after = got.next;
      }
    };
    let exemptedMatches = 0;
    for (const tenantId of tenants)
      for (const packageName of names)
        for (const targetClass of [undefined, ['os-pkgs' as const], ['lang-pkgs' as const]])
          for (const isExempted of [false, true]) {
            const d: Draw = {
              tenantId,
              packageName,
              targetClass,
              isExempted,
              sortBy: 'lastObservedAt',
              sortOrder: 'DESC',
              perPage: 1,
              page: 1,
            };
            const { total } = await page(never, d);
            expect(total).toBe(await listed(d));
            if (isExempted && (total ?? 0) > 0) exemptedMatches += 1;
          }
    // The inventory has exempted findings among the matches, so the difference is exercised.
    expect(exemptedMatches).toBeGreaterThan(0);
  });

  it('a target filter alone counts the findings its list holds too', async () => {
    // targetName without packageName reads its own index the same way (decisions.md: package filters match exactly).
    const targets = [
      ...new Set(
        records
          .filter((r) => r.kind === 'vulnerability')
          .flatMap((r) => (r.record.packages as { targetName?: string }[]).map((p) => p.targetName)),
      ),
    ]
      .filter((name): name is string => name !== undefined)
      .slice(0, 4);
    expect(targets.length).toBeGreaterThan(1);
    for (const tenantId of tenants)
      for (const targetName of [...targets, 'no-such-target'])
        for (const isExempted of [false, true]) {
          const base = { targetName, isExempted, sortBy: 'lastObservedAt', sortOrder: 'DESC', page: 1 } as const;
          const scope = { tenantId, dataVersion: 0 };
          const { total } = await never.listVulnerabilities(
            scope,
            { ...base, perPage: 1, includeTotal: true },
            undefined,
          );
          let n = 0;
          let after: FindingPosition | undefined;
          for (;;) {
            const got = await never.listVulnerabilities(scope, { ...base, perPage: 25, includeTotal: false }, after);
            n += got.items.length;
            if (got.next === null) break;
            after = got.next;
          }
          expect(total).toBe(n);
        }
  });

  it('keyset batches are the same by either plan, to the end of the list', async () => {
    await fc.assert(
      fc.asyncProperty(draws, async (d) => {
        for (const storage of [walking, barely]) {
          let after: FindingPosition | undefined;
          let expectedAfter: FindingPosition | undefined;
          for (let batch = 0; batch < 200; batch += 1) {
            const expected = await page(never, { ...d, page: 1 }, expectedAfter ?? undefined);
            const got = await page(storage, { ...d, page: 1 }, after);
            expect(got.items).toEqual(expected.items);
            expect(got.next).toEqual(expected.next);
            if (expected.next === null) break;
            after = got.next ?? undefined;
            expectedAfter = expected.next;
          }
        }
      }),
      { numRuns: 25, seed: 20261127 },
    );
  });
});
