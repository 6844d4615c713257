import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Asset, sortableAssetFields } from '../../src/domain/assets.js';
import { importRecords, setupWithKeys, TENANT_A, type TestContext } from '../helpers.js';
import type { ImportRecord } from '../records.js';
import {
  A1,
  A2,
  A3,
  A4,
  A5,
  A6,
  ALL_A,
  ENV_DEV,
  ENV_MISSING,
  ENV_PROD,
  GROUP_1,
  GROUP_2,
  INT_DEV,
  INT_PROD,
  fixture,
} from '../fixtures.js';

let ctx: TestContext;
let key: string;

beforeAll(async () => {
  ({
    ctx,
    keys: [key],
  } = await setupWithKeys(fixture, [TENANT_A]));
});
afterAll(async () => ctx.close());

type AssetJson = Record<string, unknown> & { id: string };

async function list(
  query: string,
): Promise<{ status: number; body: { data: AssetJson[]; meta: Record<string, unknown> } }> {
  const res = await ctx.app.inject({
    url: `/v1/tenant/assets${query ? `?${query}` : ''}`,
    headers: { authorization: `Bearer ${key}` },
  });
  return { status: res.statusCode, body: res.json() };
}

async function ids(query: string): Promise<string[]> {
  const res = await list(query);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data.map((a) => a.id);
}

describe('asset list: each filter alone', () => {
  const cases: [string, string[]][] = [
    ['', ALL_A],
    [`ids=${encodeURIComponent(`${A1},${A2}`)}`, [A1, A2]],
    ['ids=sirn:assets:nothing', []],
    ['executionIds=1700000000001', [A1, A3]],
    ['executionIds=1700000000001,1700000000005', [A1, A3, A5]],
    ['regions=us-east-1', [A1, A3]],
    ['regions=us-east-1,westeurope', [A1, A3, A4]],
    ['regions=US-EAST-1', []],
    [`integrationIds=${INT_PROD}`, [A1]],
    [`integrationIds=${INT_PROD},${INT_DEV}`, [A1, A2]],
    ['integrationIds=unknown-integration', []],
    [`assetGroupIds=${GROUP_1}`, [A1, A3]],
    [`assetGroupIds=${GROUP_2}`, [A5]],
    [`assetGroupIds=${GROUP_1},${GROUP_2}`, [A1, A3, A5]],
    ['assetGroupIds=no-such-group', []],
    ['environmentIds=production', [A1]],
    ['environmentIds=Non-Production', [A2]],
    ['environmentIds=production,non-production', [A1, A2]],
    [`environmentIds=${ENV_PROD.toLowerCase()}`, [A1]],
    [`environmentIds=${ENV_DEV.toUpperCase()}`, [A2]],
    [`environmentIds=${ENV_MISSING}`, []],
    ['environmentIds=00000000-0000-4000-8000-000000000000', []],
    ['severityLevels=CRITICAL', [A1]],
    ['severityLevels=HIGH', [A1, A4]],
    ['severityLevels=MEDIUM', [A2]],
    ['severityLevels=LOW', [A1]],
    ['severityLevels=medium,high', [A1, A2, A4]],
    ['secretsLevels=CRITICAL', [A1]],
    ['secretsLevels=HIGH', [A2]],
    ['secretsLevels=LOW', [A4]],
    ['secretsLevels=MEDIUM', []],
    ['resourceTypes=AWS::EC2::Instance', [A1, A3]],
    ['resourceTypes=aws::ec2::instance', []],
    ['providers=AWS', [A1, A2, A3]],
    ['providers=azure,GCP', [A4, A5]],
    ['providers=kubernetes', [A6]],
    ['services=AWS::EC2', [A1, A3]],
    ['services=aws::lambda', [A2]],
    ['services=ec2', [A1, A3]],
    ['services=Compute', [A4]],
    ['services=storage,core', [A5, A6]],
    ['services=GCP::EC2', []],
    ['firstObservedAtStart=2024-03-01', [A3, A4, A5, A6]],
    ['firstObservedAtEnd=2024-03-01', [A1, A2, A3]],
    ['firstObservedAtStart=2024-03-31T22:00:00Z&firstObservedAtEnd=2024-03-31T22:00:00.000Z', [A4]],
    [`firstObservedAtEnd=${encodeURIComponent('2024-04-01T00:00:00+02:00')}`, [A1, A2, A3, A4]],
    ['hasAdminPrivileges=true', [A1]],
    ['hasAdminPrivileges=false', [A2, A3, A4, A5, A6]],
    ['hasOverlyPermissivePrivileges=true', [A2]],
    ['isSusceptibleToPrivilegeEscalation=true', [A2]],
    ['isSusceptibleToPrivilegeEscalation=false', [A1, A3, A4, A5, A6]],
    ['hasKev=true', [A1]],
    ['hasExploit=true', [A1]],
    ['isExploitable=true', [A1]],
    ['isPubliclyExposed=true', [A1, A4]],
    ['isVulnerable=true', [A1, A2, A4, A6]],
    ['isVulnerable=false', [A3, A5]],
    ['query=web', [A1, A3]],
    ['query=PAY', [A2]],
    ['query=zzz', []],
    ['metadata=running', [A1]],
    ['metadata=INSTANCE', [A1]],
    ['metadata=443', [A1]],
    ['metadata=false', [A1]],
    ['metadata=true', [A5]],
    ['metadata=null', []],
    ['metadata=team', [A1, A5]],
    ['metadata=nodejs', [A2]],
    ['metadata=only-b', []],
    ['riskScoreGte=7.5', [A1, A4]],
    ['riskScoreGte=0', [A1, A2, A4, A5, A6]],
    ['riskScoreGte=10', []],
    ['operationalStates=active', [A1]],
    ['operationalStates=INACTIVE', [A3]],
    ['operationalStates=active,inactive', [A1, A3]],
  ];
  for (const [query, expected] of cases) {
    it(query || '(no filter)', async () => {
      expect(await ids(query)).toEqual(expected);
    });
  }
});

describe('asset list: filters combined with AND, list items with OR', () => {
  const cases: [string, string[]][] = [
    ['providers=AWS&regions=us-east-1&isPubliclyExposed=true', [A1]],
    ['severityLevels=HIGH&isPubliclyExposed=true&providers=azure', [A4]],
    [`query=web&assetGroupIds=${GROUP_1}&operationalStates=inactive`, [A3]],
    ['providers=AWS,Azure&severityLevels=HIGH,MEDIUM&riskScoreGte=3', [A1, A2, A4]],
    ['environmentIds=production,non-production&isVulnerable=true&secretsLevels=HIGH', [A2]],
    ['services=ec2&firstObservedAtStart=2024-02-01&firstObservedAtEnd=2024-12-31', [A3]],
    ['regions=us-east-1&providers=GCP', []],
  ];
  for (const [query, expected] of cases) {
    it(query, async () => {
      expect(await ids(query)).toEqual(expected);
    });
  }

  it('total counts every match, not the page', async () => {
    const res = await list('providers=AWS&perPage=2');
    expect(res.body.data.map((a) => a.id)).toEqual([A1, A2]);
    expect(res.body.meta).toEqual({ page: 1, perPage: 2, total: 3, hasNextPage: true, hasPreviousPage: false });
  });
});

const fieldValue = (asset: AssetJson, field: string): unknown => asset[field];

/** The contract's order: by the field (code point order for strings), nulls last either way, ties by id the same way. */
function expectedOrder(assets: AssetJson[], field: string, descending: boolean): string[] {
  const compare = (a: unknown, b: unknown): number =>
    a === b ? 0 : (a as string | number) < (b as string | number) ? -1 : 1;
  return [...assets]
    .sort((x, y) => {
      const a = fieldValue(x, field),
        b = fieldValue(y, field);
      if (a === null && b !== null) return 1;
      if (b === null && a !== null) return -1;
      const byField = a === null ? 0 : compare(a, b);
      const order = byField !== 0 ? byField : compare(x.id, y.id);
      return descending ? -order : order;
    })
    .map((a) => a.id);
}

describe('asset list: sorting', () => {
  for (const field of sortableAssetFields) {
    for (const order of ['ASC', 'DESC'] as const) {
      it(`sortBy=${field}&sortOrder=${order}`, async () => {
        const all = (await list('perPage=1000')).body.data;
        const sorted = await ids(`sortBy=${field}&sortOrder=${order}`);
        expect(sorted).toEqual(expectedOrder(all, field, order === 'DESC'));
      });
    }
  }

  it('sortOrder defaults to ASC', async () => {
    expect(await ids('sortBy=riskScore')).toEqual([A5, A2, A6, A1, A4, A3]);
  });

  it('ties break by id in the sort direction and nulls stay last', async () => {
    expect(await ids('sortBy=executionId&sortOrder=DESC')).toEqual([A5, A2, A3, A1, A6, A4]);
    expect(await ids('sortBy=executionId')).toEqual([A1, A3, A2, A5, A4, A6]);
    expect(await ids('sortBy=riskScore&sortOrder=DESC')).toEqual([A4, A1, A6, A2, A5, A3]);
  });

  it('strings compare by code point (upper case before lower case)', async () => {
    expect(await ids('sortBy=name')).toEqual([A3, A6, A4, A2, A1, A5]);
  });

  it('sorting applies before paging', async () => {
    expect(await ids('sortBy=riskScore&sortOrder=DESC&page=2&perPage=2')).toEqual([A6, A2]);
  });

  // Hundreds of requests (or commands) in one test: on PostgreSQL beside three other files, past the default 30 s.
  it('pages asked in any order, again, and after a write list the slices of the whole order', async () => {
    // Later pages start from where earlier ones began or ended (docs/DESIGN.md §37); asked backwards, skipping, twice.
    const check = async () => {
      for (const field of sortableAssetFields) {
        for (const order of ['ASC', 'DESC'] as const) {
          const whole = await ids(`sortBy=${field}&sortOrder=${order}`);
          for (const page of [4, 2, 3, 1, 6, 5, 7, 4, 3, 6]) {
            const q = `sortBy=${field}&sortOrder=${order}&perPage=1&page=${page}`;
            expect(await ids(q), q).toEqual(whole.slice(page - 1, page));
          }
          expect(await ids(`sortBy=${field}&sortOrder=${order}&perPage=2&page=3`)).toEqual(whole.slice(4, 6));
        }
      }
    };
    await check();
    // A write that moves assets between pages (new data version): kept positions of the old version are not used.
    const moved = fixture.map(([kind, record]): ImportRecord =>
      kind === 'asset' && record.id === A3 ? [kind, { ...record, name: 'zzz moved', riskScore: null }] : [kind, record],
    );
    expect((await importRecords(ctx.storage, moved)).problems).toEqual([]);
    expect((await list('sortBy=name&sortOrder=DESC&perPage=1&page=1')).body.data[0]!.id).toBe(A3);
    await check();
    expect((await importRecords(ctx.storage, fixture)).problems).toEqual([]);
  }, 90_000);
});

describe('asset objects', () => {
  const schemaFields = Object.keys(Asset.properties).sort();

  it('every field of the contract is present, rawData only on request', async () => {
    const { body } = await list('');
    for (const asset of body.data) expect(Object.keys(asset).sort()).toEqual(schemaFields);
  });

  it('values are imported, normalised and derived as the contract says', async () => {
    const a1 = (await list(`ids=${A1}`)).body.data[0];
    expect(a1).toMatchObject({
      id: A1,
      tenantId: TENANT_A,
      provider: 'AWS',
      executionId: 1700000000001,
      firstObservedAt: '2024-01-10T00:00:00.000Z',
      numberOfCriticalVulnerabilities: 1,
      numberOfHighVulnerabilities: 1,
      numberOfMediumVulnerabilities: 0,
      numberOfLowVulnerabilities: 1,
      isVulnerable: true,
      hasKev: true,
      hasExploit: true,
      isExploitable: true,
      numberOfCriticalSecrets: 1,
      numberOfHighSecrets: 0,
      tags: [{ Key: 'env', Value: 'prod' }],
      createdAt: null,
      resourceTags: [],
      isInVpc: false,
      policy: null,
    });
    expect(a1?.vulnerabilityScore).toBeGreaterThan(0);
    const a4 = (await list(`ids=${A4}`)).body.data[0];
    expect(a4).toMatchObject({
      firstObservedAt: '2024-03-31T22:00:00.000Z',
      executionId: null,
      numberOfHighVulnerabilities: 2,
      isVulnerable: true,
      hasKev: false,
    });
    const a6 = (await list(`ids=${A6}`)).body.data[0];
    // An UNKNOWN finding makes the asset vulnerable but counts in no severity.
    expect(a6).toMatchObject({
      isVulnerable: true,
      numberOfCriticalVulnerabilities: 0,
      numberOfHighVulnerabilities: 0,
      numberOfMediumVulnerabilities: 0,
      numberOfLowVulnerabilities: 0,
      vulnerabilityScore: 0,
    });
  });

  it('get returns the same object, and include=rawData adds rawData ({} when none was imported)', async () => {
    const auth = { authorization: `Bearer ${key}` };
    const listed = (await list(`ids=${A1}`)).body.data[0];
    const got = await ctx.app.inject({ url: `/v1/tenant/assets/${A1}`, headers: auth });
    expect(got.statusCode).toBe(200);
    expect(got.json()).toEqual({ data: listed });
    const raw = await ctx.app.inject({
      url: `/v1/tenant/assets/${encodeURIComponent(A1)}?include=rawData`,
      headers: auth,
    });
    expect(raw.json().data.rawData).toEqual({
      Instance: { State: 'Running', Ports: [22, 443], Monitoring: false, Note: null },
      Owner: 'Team-Alpha',
    });
    const none = await ctx.app.inject({ url: `/v1/tenant/assets/${A6}?include=RAWDATA`, headers: auth });
    expect(none.json().data.rawData).toEqual({});
  });
});
