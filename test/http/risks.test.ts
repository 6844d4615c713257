import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Integration, Risk } from '../../src/domain/risks.js';
import { setupWithKeys, TENANT_A, TENANT_B, type TestContext } from '../helpers.js';
import {
  A1,
  A2,
  A5,
  ENV_DEV,
  ENV_PROD,
  INT_DEV,
  INT_PROD,
  MISSING_ASSET,
  R1,
  R2,
  R3,
  R4,
  R5,
  R6,
  fixture,
  riskFixture,
} from '../fixtures.js';

let ctx: TestContext;
let keyA: string;
let keyB: string;
let statements: string[];

beforeAll(async () => {
  ({
    ctx,
    statements,
    keys: [keyA, keyB],
  } = await setupWithKeys([...fixture, ...riskFixture], [TENANT_A, TENANT_B]));
});
afterAll(async () => ctx.close());

type RiskJson = Record<string, unknown> & { id: string };
interface Page {
  data: RiskJson[];
  meta: { perPage: number; total: number; cursor: string | null };
}

async function get(query: string, key = keyA) {
  const res = await ctx.app.inject({
    url: `/v1/tenant/risks${query ? `?${query}` : ''}`,
    headers: { authorization: `Bearer ${key}` },
  });
  return { status: res.statusCode, body: res.json<Page & { errors?: { code: string; field?: string }[] }>() };
}

async function ids(query: string): Promise<string[]> {
  const res = await get(query);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data.map((r) => r.id);
}

/** Follows meta.cursor from the first batch to the last and returns every id in order. */
async function traverse(query: string, perPages: number[]): Promise<{ ids: string[]; batches: number }> {
  const seen: string[] = [];
  // meta.total counts every match under the filters, whatever the cursor.
  const totals = new Set<number>();
  let cursor: string | null = null;
  let batches = 0;
  do {
    const perPage = perPages[batches % perPages.length]!;
    const res = await get(
      `${query}${query ? '&' : ''}perPage=${perPage}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.length).toBeLessThanOrEqual(perPage);
    seen.push(...res.body.data.map((r) => r.id));
    totals.add(res.body.meta.total);
    cursor = res.body.meta.cursor;
    batches += 1;
  } while (cursor !== null && batches < 50);
  expect([...totals]).toEqual([seen.length]);
  return { ids: seen, batches };
}

describe('risk list: order', () => {
  it('defaults to discoveredAt descending, ties by id descending, with total and no cursor on the last batch', async () => {
    const res = await get('');
    expect(res.body.data.map((r) => r.id)).toEqual([R6, R5, R4, R3, R2, R1]);
    expect(res.body.meta).toEqual({ perPage: 100, total: 6, cursor: null });
  });

  const orders: [string, string[]][] = [
    ['sortOrder=asc', [R1, R2, R3, R4, R5, R6]],
    ['sortOrder=ASC&sortBy=DISCOVEREDAT', [R1, R2, R3, R4, R5, R6]],
    ['sortBy=discoveredAt&sortOrder=desc', [R6, R5, R4, R3, R2, R1]],
    ['sortBy=score', [R6, R1, R5, R3, R2, R4]],
    ['sortBy=score&sortOrder=desc', [R6, R1, R5, R3, R2, R4]],
    ['sortBy=score&sortOrder=asc', [R4, R2, R3, R5, R1, R6]],
  ];
  for (const [query, expected] of orders) it(query, async () => expect(await ids(query)).toEqual(expected));
});

describe('risk list: filters', () => {
  const cases: [string, string[]][] = [
    [`ids=${R1},${R4},nothing`, [R4, R1]],
    ['riskTypeIds=public-exposure', [R3, R1]],
    ['riskTypeIds=excessive-permissions,vulnerable-workload', [R6, R5, R4, R2]],
    ['environmentIds=production', [R6, R1]],
    ['environmentIds=non-production', [R2]],
    [`environmentIds=${ENV_PROD.toLowerCase()},${ENV_DEV}`, [R6, R2, R1]],
    ['environmentIds=00000000-0000-4000-8000-000000000000', []],
    [`integrationIds=${INT_PROD}`, [R6, R1]],
    [`integrationIds=${INT_DEV},unknown`, [R2]],
    [`primaryAssetIds=${encodeURIComponent(`${A1},${MISSING_ASSET}`)}`, [R3, R1]],
    ['severityLevels=critical', [R6, R1]],
    ['severityLevels=HIGH,LOW', [R5, R4, R2]],
    ['lifecycleStates=OPEN', [R6, R5, R2, R1]],
    ['lifecycleStates=dismissed_accepted,DISMISSED_NOT_A_RISK', [R4, R3]],
    ['resourceTypes=AWS::EC2::Instance', [R3, R1]],
    ['resourceTypes=aws::ec2::instance', []],
    ['discoveredAtStart=2024-02-01', [R6, R5, R4, R3, R2]],
    ['discoveredAtEnd=2024-02-01T00:00:00Z', [R3, R2, R1]],
    ['discoveredAtStart=2024-05-01T10:00:00Z&discoveredAtEnd=2024-05-01T10:00:00Z', [R6]],
    ['severityLevels=CRITICAL,HIGH&lifecycleStates=OPEN&environmentIds=production', [R6, R1]],
    ['riskTypeIds=public-exposure&discoveredAtStart=2024-01-02&sortBy=score', [R3]],
    [`integrationIds=${INT_PROD}&severityLevels=LOW`, []],
  ];
  for (const [query, expected] of cases) {
    it(query, async () => {
      const res = await get(query);
      expect(res.body.data.map((r) => r.id)).toEqual(expected);
      expect(res.body.meta.total).toBe(expected.length);
    });
  }

  it('parameters follow the request rules (unknown, empty, bad enum, range, perPage 1 to 100)', async () => {
    for (const [query, field] of [
      ['foo=1', 'foo'],
      ['severityLevels=', 'severityLevels'],
      ['lifecycleStates=CLOSED', 'lifecycleStates'],
      ['sortBy=name', 'sortBy'],
      ['sortOrder=up', 'sortOrder'],
      ['perPage=0', 'perPage'],
      ['perPage=101', 'perPage'],
      ['discoveredAtStart=2024-02-02&discoveredAtEnd=2024-02-01', 'discoveredAtStart'],
      ['include=asset', 'include'],
      ['fields=id,bogus', 'fields'],
      ['fields=primaryAsset', 'fields'],
      ['environmentIds=staging', 'environmentIds'],
      ['cursor=a&cursor=b', 'cursor'],
    ] as const) {
      const res = await get(query);
      expect(res.status, query).toBe(400);
      expect(
        res.body.errors?.map((e) => e.field),
        query,
      ).toEqual([field]);
    }
  });
});

describe('risk list: cursor pages', () => {
  for (const query of [
    '',
    'sortBy=score',
    'sortBy=score&sortOrder=asc',
    'sortOrder=asc',
    'severityLevels=CRITICAL,HIGH,MEDIUM',
    'fields=id,score&include=integration',
  ]) {
    it(`following the cursor visits every risk once, in order (${query || 'defaults'})`, async () => {
      const full = await ids(query);
      for (const perPages of [[1], [2], [4], [5], [100], [1, 3, 2]]) {
        const { ids: seen, batches } = await traverse(query, perPages);
        expect(seen, `perPage ${perPages.join(',')}`).toEqual(full);
        if (perPages.length === 1) expect(batches).toBe(Math.max(1, Math.ceil(full.length / perPages[0]!)));
      }
    });
  }

  it('an empty result has a null cursor', async () => {
    expect((await get('riskTypeIds=none')).body.meta).toEqual({ perPage: 100, total: 0, cursor: null });
  });

  it('a cursor is bound to the filters, sort, fields, include and tenant it was issued for', async () => {
    const first = await get('severityLevels=CRITICAL,HIGH&perPage=2');
    const cursor = encodeURIComponent(first.body.meta.cursor!);
    // The same query normalised (items as a set, other case, defaults explicit, other perPage) accepts it.
    for (const same of [
      'severityLevels=high,CRITICAL',
      'severityLevels=CRITICAL&severityLevels=HIGH&sortBy=discoveredAt&sortOrder=desc&perPage=1',
    ]) {
      expect((await get(`${same}&cursor=${cursor}`)).status, same).toBe(200);
    }
    for (const other of [
      'severityLevels=CRITICAL',
      '',
      'severityLevels=CRITICAL,HIGH&sortBy=score',
      'severityLevels=CRITICAL,HIGH&sortOrder=asc',
      'severityLevels=CRITICAL,HIGH&fields=id',
      'severityLevels=CRITICAL,HIGH&include=integration',
      'severityLevels=CRITICAL,HIGH&lifecycleStates=OPEN',
    ]) {
      const res = await get(`${other}${other ? '&' : ''}cursor=${cursor}`);
      expect(res.status, other).toBe(400);
      expect(res.body.errors).toEqual([{ code: 'invalid_cursor', field: 'cursor', message: expect.any(String) }]);
    }
    const otherTenant = await get(`severityLevels=CRITICAL,HIGH&cursor=${cursor}`, keyB);
    expect(otherTenant.status).toBe(400);
    expect(otherTenant.body.errors?.[0]?.code).toBe('invalid_cursor');
  });

  it('an altered or made-up cursor is 400 invalid_cursor, never a 500', async () => {
    const cursor = (await get('perPage=2')).body.meta.cursor!;
    const [body, mac] = cursor.split('.') as [string, string];
    const forged = Buffer.from(JSON.stringify([1, '1999-01-01T00:00:00.000Z', 'risk-99'])).toString('base64url');
    const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
    for (const bad of [
      flip(body, 3),
      `${body}.${flip(mac, 0)}`,
      `${forged}.${mac}`,
      `${body}`,
      `${body}.${mac}.x`,
      'garbage',
      '....',
      `${cursor}=`,
      '%E2%82%AC',
    ]) {
      const res = await get(`perPage=2&cursor=${encodeURIComponent(bad)}`);
      expect(res.status, bad).toBe(400);
      expect(res.body.errors?.[0]?.code, bad).toBe('invalid_cursor');
    }
  });
});

describe('risk objects, include and fields', () => {
  const riskFields = Object.keys(Risk.properties).sort();

  it('every risk field is present; embeds only on request', async () => {
    const { body } = await get('');
    for (const risk of body.data) expect(Object.keys(risk).sort()).toEqual(riskFields);
    const r1 = body.data.find((r) => r.id === R1)!;
    expect(r1).toMatchObject({
      tenantId: TENANT_A,
      severityLevel: 'CRITICAL',
      score: 9.5,
      discoveredAt: '2024-01-01T00:00:00.000Z',
      primaryAssetId: A1,
    });
    expect(body.data.find((r) => r.id === R4)).toMatchObject({ severityLevel: 'LOW' });
    expect(body.data.find((r) => r.id === R5)).toMatchObject({
      integrationId: null,
      primaryAssetId: null,
      meta: null,
      resolutions: [],
      factors: [],
    });
    expect(body.data.find((r) => r.id === R6)).toMatchObject({ discoveredAt: '2024-05-01T10:00:00.000Z' });
  });

  it('include embeds the asset (as the asset operations return it) and the integration, or null', async () => {
    const { body } = await get('include=primaryAsset,integration');
    const byId = new Map(body.data.map((r) => [r.id, r]));
    const asset = await ctx.app.inject({
      url: `/v1/tenant/assets/${A1}`,
      headers: { authorization: `Bearer ${keyA}` },
    });
    expect(byId.get(R1)!.primaryAsset).toEqual(asset.json().data);
    expect(byId.get(R1)!.integration).toMatchObject({
      integrationId: INT_PROD,
      name: 'aws prod',
      tenantId: TENANT_A,
      provider: 'AWS',
      schedule: null,
    });
    expect(Object.keys(byId.get(R1)!.integration as object).sort()).toEqual(Object.keys(Integration.properties).sort());
    expect((byId.get(R6)!.primaryAsset as { id: string }).id).toBe(A5);
    expect((byId.get(R2)!.primaryAsset as { id: string }).id).toBe(A2);
    expect(byId.get(R3)!.primaryAsset).toBeNull();
    expect(byId.get(R5)!.primaryAsset).toBeNull();
    expect(byId.get(R4)!.integration).toBeNull();
    expect(byId.get(R5)!.integration).toBeNull();
    expect('rawData' in (byId.get(R1)!.primaryAsset as object)).toBe(false);
    const onlyOne = (await get('include=INTEGRATION')).body.data[0]!;
    expect('integration' in onlyOne && !('primaryAsset' in onlyOne)).toBe(true);
  });

  it("the same asset id in another tenant embeds that tenant's asset", async () => {
    const { body } = await get('include=primaryAsset', keyB);
    expect(body.data.map((r) => r.id)).toEqual([R1]);
    expect(body.data[0]).toMatchObject({
      tenantId: TENANT_B,
      riskTypeId: 'tenant-b-type',
      primaryAsset: { id: A1, tenantId: TENANT_B, name: 'tenant-b-web' },
    });
  });

  it('fields projects risk properties only; include is independent of it', async () => {
    const { body } = await get('fields=score,id');
    expect(body.data[0]).toEqual({ id: R6, score: 10 });
    const both = (await get('fields=id&include=integration,primaryAsset&ids=risk-01')).body.data[0]!;
    expect(Object.keys(both)).toEqual(['id', 'primaryAsset', 'integration']);
    expect(both.primaryAsset).toMatchObject({ id: A1 });
  });

  it('a batch with both embeds costs the same number of statements whatever its size (no query per risk)', async () => {
    const countFor = async (query: string) => {
      await get(query); // the count of matches is computed once per filter set; measure the steady state
      statements.length = 0;
      await get(query);
      return statements.length;
    };
    const small = await countFor('include=primaryAsset,integration&perPage=1');
    const large = await countFor('include=primaryAsset,integration&perPage=100');
    expect(large).toBe(small);
    // The key, the batch, the two embeds, the data version read with the count, and the transaction's own.
    expect(large).toBeLessThanOrEqual(8);
  });
});
