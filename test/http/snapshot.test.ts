// One read snapshot per request: an import that commits between a list's statements (here, deterministically, right
// after the page's first read) leaves the response wholly before it: the page's rows and its total agree.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixture } from '../fixtures.js';
import { createKey, importRecords, setup, TENANT_A, type TestContext } from '../helpers.js';
import { assetRecord, findingRecord, type ImportRecord } from '../records.js';

let ctx: TestContext;
let key: string;
/** When set, runs once, after the next statement that matches it has run and before the request's next statement. */
let interleave: { match: RegExp; write: () => Promise<void> } | undefined;

/** Statements of the API's storage since the last reset. */
const statements: string[] = [];

beforeAll(async () => {
  ctx = await setup(undefined, {
    onQuery: async (sql) => {
      statements.push(sql);
      if (!interleave || !interleave.match.test(sql)) return;
      const { write } = interleave;
      interleave = undefined;
      await write();
    },
  });
  expect((await importRecords(ctx.storage, fixture)).problems).toEqual([]);
  key = await createKey(ctx.storage, TENANT_A);
});
afterAll(async () => ctx.close());

let added = 0;
/** An import of `n` new assets of tenant A, each with a finding: it commits and bumps the tenant's data version. */
async function importMore(n: number): Promise<void> {
  const records: ImportRecord[] = [];
  const observed = { firstObservedAt: '2024-01-01T00:00:00Z', lastObservedAt: '2024-01-02T00:00:00Z' };
  for (let i = 0; i < n; i += 1) {
    const id = `sirn:assets:snapshot-${(added += 1)}`;
    records.push(assetRecord(id, observed), findingRecord(id, 'CVE-2024-9999', 'HIGH', observed));
  }
  expect((await importRecords(ctx.storage, records)).problems).toEqual([]);
}

const list = async (url: string) => {
  const res = await ctx.app.inject({ url, headers: { authorization: `Bearer ${key}` } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{ data: unknown[]; meta: { total: number } }>();
};

describe('an import committing in the middle of a request', () => {
  it('an asset page and its total come from one snapshot', async () => {
    // A date filter, which only SQL counts (not the kept columns); the match is the page's own select, not the
    // background read of the columns.
    const before = await list('/v1/tenant/assets?perPage=1000&providers=AWS,GCP&firstObservedAtStart=2000-01-01');
    interleave = { match: /^select "assets"\."id", "assets"\."\w+" as "sortValue"/, write: () => importMore(50) };
    // A filter set not counted yet (the same matches, spelled otherwise), so the count is made after the commit.
    const during = await list('/v1/tenant/assets?perPage=1000&providers=GCP,AWS&firstObservedAtStart=2000-01-01');
    expect(interleave).toBeUndefined();
    expect(during.data).toHaveLength(during.meta.total);
    expect(during.meta.total).toBe(before.meta.total);
    // The next request sees the import whole.
    const after = await list('/v1/tenant/assets?perPage=1000&providers=AWS,GCP,Azure&regions=us-east-1,none');
    expect(after.data).toHaveLength(after.meta.total);
    expect((await list('/v1/tenant/assets?perPage=1000&providers=AWS,GCP&sortBy=name')).data).toHaveLength(
      before.meta.total + 50,
    );
  });

  it('a finding page and its total come from one snapshot', async () => {
    const before = await list('/v1/tenant/vulnerabilities?perPage=2000&vulnerabilityIds=CVE-2024-9999');
    interleave = { match: /from "vulnerabilities"/, write: () => importMore(20) };
    const during = await list(
      '/v1/tenant/vulnerabilities?perPage=2000&vulnerabilityIds=CVE-2024-9999,CVE-0000-0000&sortBy=firstObservedAt',
    );
    expect(interleave).toBeUndefined();
    expect(during.data).toHaveLength(during.meta.total);
    expect(during.meta.total).toBe(before.meta.total);
  });
});

describe('an import committing in the middle of a request counted from kept columns', () => {
  it('the total comes from the columns of the version the page was read at', async () => {
    const before = await list('/v1/tenant/assets?perPage=1000&providers=AWS,GCP');
    // Until the columns of this version are kept (read in the background), a new filter set is counted by SQL.
    let kept = false;
    for (let attempt = 0; attempt < 500 && !kept; attempt += 1) {
      statements.length = 0;
      await list(`/v1/tenant/assets?perPage=1&riskScoreGte=${attempt / 1e6}`);
      kept = !statements.some((sql) => /count\(/i.test(sql));
      if (!kept) await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(kept).toBe(true);
    // The page's own select (ids only), not the background read of the columns (many columns).
    interleave = { match: /^select "assets"\."id", "assets"\."\w+" as "sortValue"/, write: () => importMore(30) };
    statements.length = 0;
    const during = await list('/v1/tenant/assets?perPage=1000&providers=GCP,AWS&isPubliclyExposed=false');
    expect(interleave).toBeUndefined();
    expect(statements.some((sql) => /count\(/i.test(sql))).toBe(false);
    expect(during.data).toHaveLength(during.meta.total);
    const same = await list('/v1/tenant/assets?perPage=1000&providers=AWS,GCP&isPubliclyExposed=false&sortBy=name');
    expect(same.meta.total).toBe(during.meta.total + 30);
    expect(before.meta.total).toBeGreaterThan(0);
  });
});
