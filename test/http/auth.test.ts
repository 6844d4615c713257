// Authentication and tenant isolation through HTTP (app.inject) on a real SQLite database
// filled with the hand-made fixture: every 401 case answers the same, and tenant B never sees tenant A's records.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashKey } from '../../src/domain/keys.js';
import { A1, A2, A3, ALL_A, ENV_PROD, GROUP_1, GROUP_2, INT_PROD, fixture } from '../fixtures.js';
import { ORG_A, ORG_B, TENANT_A, TENANT_B, createKey, setupWithKeys, type TestContext } from '../helpers.js';

const ASSETS = '/v1/tenant/assets';
const JSON_UTF8 = 'application/json; charset=utf-8';
const B_ONLY = 'sirn:assets:b-only';

interface Problem {
  code: string;
  field?: string;
  message: string;
}
interface ErrorBody {
  errors: Problem[];
}
interface AssetOut {
  id: string;
  tenantId: string;
  [field: string]: unknown;
}
interface ListBody {
  data: AssetOut[];
  meta: { page: number; perPage: number; total: number; hasNextPage: boolean; hasPreviousPage: boolean };
}

let ctx: TestContext;
let keyA: string;
let keyB: string;

beforeAll(async () => {
  ({
    ctx,
    keys: [keyA, keyB],
  } = await setupWithKeys(fixture, [TENANT_A, TENANT_B]));
});

afterAll(async () => {
  await ctx.close();
});

const assetPath = (id: string): string => `${ASSETS}/${encodeURIComponent(id)}`;

function request(url: string, authorization?: string, method: 'GET' | 'HEAD' = 'GET') {
  return ctx.app.inject({ method, url, headers: authorization === undefined ? {} : { authorization } });
}

async function revoke(key: string): Promise<void> {
  const found = await ctx.storage.findKeyByHash(hashKey(key));
  expect(found).toBeDefined();
  expect(await ctx.storage.revokeKey(found?.keyId ?? '', new Date().toISOString())).toBe(true);
}

const minutesFromNow = (minutes: number): string => new Date(Date.now() + minutes * 60_000).toISOString();

/** The one 401 every failure must give, taken from the plainest case (no header). */
let reference: { body: string; message: string };

async function expect401(url: string, authorization?: string, method: 'GET' | 'HEAD' = 'GET'): Promise<void> {
  const res = await request(url, authorization, method);
  expect(res.statusCode, `${method} ${url} with ${JSON.stringify(authorization)}: ${res.body}`).toBe(401);
  expect(res.headers['www-authenticate']).toBe('Bearer');
  expect(res.headers['content-type']).toBe(JSON_UTF8);
  if (method === 'HEAD') {
    expect(res.body).toBe('');
    return;
  }
  const body = res.json<ErrorBody>();
  expect(body).toStrictEqual({ errors: [{ code: 'unauthorized', message: expect.any(String) }] });
  expect(body.errors[0]?.message).not.toBe('');
  expect(res.body).toBe(reference.body);
}

describe('401 cases', () => {
  beforeAll(async () => {
    const res = await request(ASSETS);
    expect(res.statusCode).toBe(401);
    const body = res.json<ErrorBody>();
    reference = { body: res.body, message: body.errors[0]?.message ?? '' };
    expect(reference.message).not.toBe('');
  });

  it('the reference 401 (no Authorization header) has the documented shape and headers', async () => {
    const res = await request(ASSETS);
    expect(res.statusCode).toBe(401);
    expect(res.json<ErrorBody>()).toStrictEqual({ errors: [{ code: 'unauthorized', message: reference.message }] });
    expect(res.headers['www-authenticate']).toBe('Bearer');
    expect(res.headers['content-type']).toBe(JSON_UTF8);
    expect(res.headers['x-request-id']).toMatch(/^[A-Za-z0-9._-]{1,128}$/);
  });

  const malformed: [string, () => string | undefined][] = [
    ['a missing header', () => undefined],
    ['Basic xyz', () => 'Basic xyz'],
    ['Basic with a valid key', () => `Basic ${keyA}`],
    ['Token with a valid key', () => `Token ${keyA}`],
    ['the bare key without a scheme', () => keyA],
    ['Bearer with no key', () => 'Bearer'],
    ['Bearer and blanks only', () => 'Bearer    '],
    ['an empty header', () => ''],
    ['Bearer glued to the key', () => `Bearer${keyA}`],
    ['an unknown key', () => 'Bearer not-a-key'],
    ['a well-formed but never-issued secinv_ key', () => `Bearer secinv_${'A'.repeat(43)}`],
    ['the prefix alone', () => 'Bearer secinv_'],
    ['a valid key with a character appended', () => `Bearer ${keyA}x`],
    ['a valid key with its last character removed', () => `Bearer ${keyA.slice(0, -1)}`],
    ['a valid key in another letter case', () => `Bearer ${keyA.toUpperCase()}`],
    ['two keys', () => `Bearer ${keyA} ${keyB}`],
    ['the hash of a valid key', () => `Bearer ${hashKey(keyA)}`],
  ];

  it.each(malformed)('%s is 401 on the list', async (_name, header) => {
    await expect401(ASSETS, header());
  });

  it.each(malformed)('%s is 401 on the get (even for an existing asset)', async (_name, header) => {
    await expect401(assetPath(A1), header());
  });

  it.each(malformed)('%s is 401 on HEAD', async (_name, header) => {
    await expect401(ASSETS, header(), 'HEAD');
  });

  it('a revoked key is 401', async () => {
    const key = await createKey(ctx.storage, TENANT_A);
    await revoke(key);
    await expect401(ASSETS, `Bearer ${key}`);
    await expect401(assetPath(A1), `Bearer ${key}`);
  });

  it('an expired key is 401', async () => {
    const key = await createKey(ctx.storage, TENANT_A, { expiresAt: minutesFromNow(-1) });
    await expect401(ASSETS, `Bearer ${key}`);
    await expect401(assetPath(A1), `Bearer ${key}`);
  });

  it('a key expired long ago is 401', async () => {
    const key = await createKey(ctx.storage, TENANT_A, { expiresAt: '2020-01-01T00:00:00.000Z' });
    await expect401(ASSETS, `Bearer ${key}`);
  });

  it('a key that has not expired yet works', async () => {
    const key = await createKey(ctx.storage, TENANT_A, { expiresAt: minutesFromNow(60) });
    const res = await request(ASSETS, `Bearer ${key}`);
    expect(res.statusCode).toBe(200);
    expect(res.json<ListBody>().data.map((a) => a.id)).toEqual(ALL_A);
  });

  it('revocation takes effect on the next request', async () => {
    const key = await createKey(ctx.storage, TENANT_A);
    const before = await request(assetPath(A1), `Bearer ${key}`);
    expect(before.statusCode).toBe(200);
    expect(before.json<{ data: AssetOut }>().data.id).toBe(A1);
    await revoke(key);
    await expect401(assetPath(A1), `Bearer ${key}`);
    await expect401(ASSETS, `Bearer ${key}`);
    // Other keys of the tenant are untouched.
    expect((await request(ASSETS, `Bearer ${keyA}`)).statusCode).toBe(200);
  });

  it('every 401 has the same body, whatever the cause', async () => {
    const revoked = await createKey(ctx.storage, TENANT_A);
    await revoke(revoked);
    const expired = await createKey(ctx.storage, TENANT_B, { expiresAt: minutesFromNow(-5) });
    const headers = [
      undefined,
      'Basic xyz',
      'Bearer',
      'Bearer    ',
      'Bearer nope',
      `Bearer secinv_${'b'.repeat(43)}`,
      `Bearer ${revoked}`,
      `Bearer ${expired}`,
    ];
    const bodies = new Set<string>();
    for (const header of headers) {
      const res = await request(`${ASSETS}?perPage=1`, header);
      expect(res.statusCode).toBe(401);
      bodies.add(res.body);
    }
    expect([...bodies]).toEqual([reference.body]);
  });
});

describe('the Authorization scheme', () => {
  it.each([
    ['bearer', (k: string) => `bearer ${k}`],
    ['BEARER', (k: string) => `BEARER ${k}`],
    ['BeArEr', (k: string) => `BeArEr ${k}`],
    ['spaces around the key', (k: string) => `Bearer    ${k}    `],
    ['spaces before the scheme', (k: string) => `   Bearer ${k}`],
    ['lower-case scheme and spaces', (k: string) => `bearer   ${k} `],
  ])('%s works', async (_name, header) => {
    const res = await request(ASSETS, header(keyA));
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json<ListBody>();
    expect(body.data.map((a) => a.id)).toEqual(ALL_A);
    expect(body.meta.total).toBe(6);
  });
});

describe('authentication comes before parameters', () => {
  it.each([
    ['no key', undefined],
    ['an unknown key', 'Bearer nope'],
    ['Basic', 'Basic xyz'],
  ])('%s with bad parameters is 401', async (_name, header) => {
    await expect401(`${ASSETS}?page=0&bogus=1&severityLevels=`, header);
    await expect401(`${assetPath(A1)}?include=bogus`, header);
    await expect401(`${assetPath('sirn:assets:missing')}?include=bogus`, header);
  });

  it('a revoked key with bad parameters is 401', async () => {
    const key = await createKey(ctx.storage, TENANT_A);
    await revoke(key);
    await expect401(`${ASSETS}?perPage=5000`, `Bearer ${key}`);
  });

  it('a missing asset without a key is 401, not 404', async () => {
    await expect401(assetPath('sirn:assets:missing'));
    await expect401(assetPath(A2), `Bearer nope`);
  });

  it('a good key with bad parameters is 400', async () => {
    const list = await request(`${ASSETS}?page=0&bogus=1`, `Bearer ${keyA}`);
    expect(list.statusCode).toBe(400);
    expect(
      list
        .json<ErrorBody>()
        .errors.map((e) => [e.field, e.code])
        .sort(),
    ).toEqual([
      ['bogus', 'unknown_parameter'],
      ['page', 'invalid_parameter'],
    ]);
    const get = await request(`${assetPath(A1)}?include=bogus`, `Bearer ${keyB}`);
    expect(get.statusCode).toBe(400);
    expect(get.json<ErrorBody>()).toStrictEqual({
      errors: [{ code: 'invalid_parameter', field: 'include', message: expect.any(String) }],
    });
  });
});

describe('tenant isolation', () => {
  it("with tenant B's key, A1's id is tenant B's own asset", async () => {
    const res = await request(assetPath(A1), `Bearer ${keyB}`);
    expect(res.statusCode).toBe(200);
    const { data } = res.json<{ data: AssetOut }>();
    expect(data.id).toBe(A1);
    expect(data.name).toBe('tenant-b-web');
    expect(data.tenantId).toBe(TENANT_B);
    expect(data.organizationId).toBe(ORG_B);
    expect(data.region).toBe('ap-south-1');
    // Derived fields come from B's findings only (B: one CRITICAL; A: CRITICAL, HIGH, LOW with KEV and exploit).
    expect(data.numberOfCriticalVulnerabilities).toBe(1);
    expect(data.numberOfHighVulnerabilities).toBe(0);
    expect(data.numberOfLowVulnerabilities).toBe(0);
    expect(data.hasKev).toBe(false);
    expect(data.hasExploit).toBe(false);
    // Secrets and attributes are B's (A's A1 has a critical secret and admin privileges).
    expect(data.numberOfCriticalSecrets).toBe(0);
    expect(data.hasAdminPrivileges).toBe(false);
    expect('rawData' in data).toBe(false);
  });

  it("include=rawData with tenant B's key gives B's rawData", async () => {
    const res = await request(`${assetPath(A1)}?include=rawData`, `Bearer ${keyB}`);
    expect(res.statusCode).toBe(200);
    const { data } = res.json<{ data: AssetOut }>();
    expect(data.tenantId).toBe(TENANT_B);
    expect(data.rawData).toEqual({ secret: 'only-b' });
  });

  it("with tenant A's key, A1 is A's own asset", async () => {
    const res = await request(`${assetPath(A1)}?include=rawData`, `Bearer ${keyA}`);
    expect(res.statusCode).toBe(200);
    const { data } = res.json<{ data: AssetOut }>();
    expect(data.name).toBe('web-prod-1');
    expect(data.tenantId).toBe(TENANT_A);
    expect(data.organizationId).toBe(ORG_A);
    expect(data.numberOfHighVulnerabilities).toBe(1);
    expect(data.rawData).toEqual({
      Instance: { State: 'Running', Ports: [22, 443], Monitoring: false, Note: null },
      Owner: 'Team-Alpha',
    });
  });

  it('an id only tenant A has is 404 for B, with the same body as a truly missing id', async () => {
    const other = await request(assetPath(A2), `Bearer ${keyB}`);
    const missing = await request(
      assetPath('sirn:assets:u2:aws:lambda:function:eu-west-1:function/nothing'),
      `Bearer ${keyB}`,
    );
    expect(other.statusCode).toBe(404);
    expect(missing.statusCode).toBe(404);
    expect(other.json<ErrorBody>()).toStrictEqual({ errors: [{ code: 'not_found', message: expect.any(String) }] });
    expect(other.body).toBe(missing.body);
    expect(other.headers['content-type']).toBe(missing.headers['content-type']);
    expect(other.headers['content-length']).toBe(missing.headers['content-length']);
    // Also with include=rawData, and also raw (unencoded) in the path.
    const withRaw = await request(`${assetPath(A3)}?include=rawData`, `Bearer ${keyB}`);
    expect(withRaw.statusCode).toBe(404);
    expect(withRaw.body).toBe(missing.body);
    const rawPath = await request(`${ASSETS}/${A2}`, `Bearer ${keyB}`);
    expect(rawPath.statusCode).toBe(404);
    expect(rawPath.body).toBe(missing.body);
  });

  it('an id only tenant B has is 404 for A', async () => {
    const res = await request(assetPath(B_ONLY), `Bearer ${keyA}`);
    expect(res.statusCode).toBe(404);
    expect(res.json<ErrorBody>()).toStrictEqual({ errors: [{ code: 'not_found', message: expect.any(String) }] });
  });

  it("B's asset list holds only B's 2 assets", async () => {
    const res = await request(ASSETS, `Bearer ${keyB}`);
    expect(res.statusCode).toBe(200);
    const body = res.json<ListBody>();
    expect(body.data.map((a) => a.id)).toEqual([B_ONLY, A1]);
    expect(body.data.map((a) => a.tenantId)).toEqual([TENANT_B, TENANT_B]);
    expect(body.data.map((a) => a.name)).toEqual(['b-only', 'tenant-b-web']);
    expect(body.meta).toEqual({ page: 1, perPage: 100, total: 2, hasNextPage: false, hasPreviousPage: false });
  });

  it("B's page past the end reports B's total", async () => {
    const res = await request(`${ASSETS}?perPage=1&page=3`, `Bearer ${keyB}`);
    expect(res.statusCode).toBe(200);
    expect(res.json<ListBody>()).toEqual({
      data: [],
      meta: { page: 3, perPage: 1, total: 2, hasNextPage: false, hasPreviousPage: true },
    });
  });

  // Each filter names something that exists only in tenant A (or matches only A's version of A1).
  it.each([
    ['ids=A2', `ids=${encodeURIComponent(A2)}`, []],
    ['ids=A2,A3', `ids=${encodeURIComponent(`${A2},${A3}`)}`, []],
    ["ids=A1 gives B's A1", `ids=${encodeURIComponent(A1)}`, [A1]],
    ['integrationIds of A', `integrationIds=${INT_PROD}`, []],
    ['assetGroupIds=GROUP_1 (holds A1 in A)', `assetGroupIds=${GROUP_1}`, []],
    ['assetGroupIds=GROUP_1,GROUP_2', `assetGroupIds=${GROUP_1},${GROUP_2}`, []],
    ['environmentIds=production', 'environmentIds=production', []],
    ['environmentIds=non-production', 'environmentIds=non-production', []],
    ["environmentIds=A's production environment", `environmentIds=${ENV_PROD}`, []],
    ['executionIds of A', 'executionIds=1700000000001', []],
    ['regions=us-east-1 (A1 and A3 in A)', 'regions=us-east-1', [B_ONLY]],
    ['regions=eu-west-1', 'regions=eu-west-1', []],
    ['providers=Azure', 'providers=Azure', []],
    ["severityLevels=HIGH (A's A1 has HIGH)", 'severityLevels=HIGH', []],
    ["severityLevels=CRITICAL (B's own finding)", 'severityLevels=CRITICAL', [A1]],
    ["secretsLevels=CRITICAL (A's A1 has one)", 'secretsLevels=CRITICAL', []],
    ['hasKev=true', 'hasKev=true', []],
    ['hasAdminPrivileges=true', 'hasAdminPrivileges=true', []],
    ['isPubliclyExposed=true', 'isPubliclyExposed=true', []],
    ['query=prod (A1 is web-prod-1 in A)', 'query=prod', []],
    ['query=payments', 'query=payments', []],
    ['metadata=Team-Alpha (A1 rawData in A)', 'metadata=team-alpha', []],
    ['metadata=only-b', 'metadata=only-b', [A1]],
    ['riskScoreGte=0', 'riskScoreGte=0', []],
    ['operationalStates=active', 'operationalStates=active', []],
    ['services=EC2', 'services=EC2', []],
    ['firstObservedAtStart=2024-01-01', 'firstObservedAtStart=2024-01-01', []],
  ] as [string, string, string[]][])("with B's key, %s returns only B's records", async (_name, query, ids) => {
    const res = await request(`${ASSETS}?${query}`, `Bearer ${keyB}`);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json<ListBody>();
    expect(body.data.map((a) => a.id)).toEqual(ids);
    expect(body.meta.total).toBe(ids.length);
    for (const asset of body.data) {
      expect(asset.tenantId).toBe(TENANT_B);
      expect(asset.organizationId).toBe(ORG_B);
    }
  });

  it("with A's key, B's records are invisible to filters", async () => {
    for (const query of [
      `ids=${encodeURIComponent(B_ONLY)}`,
      'metadata=only-b',
      'query=tenant-b',
      'regions=ap-south-1',
    ]) {
      const res = await request(`${ASSETS}?${query}`, `Bearer ${keyA}`);
      expect(res.statusCode).toBe(200);
      expect(res.json<ListBody>()).toEqual({
        data: [],
        meta: { page: 1, perPage: 100, total: 0, hasNextPage: false, hasPreviousPage: false },
      });
    }
  });

  it("A's list has only A's 6 assets, all of tenant A", async () => {
    const res = await request(ASSETS, `Bearer ${keyA}`);
    const body = res.json<ListBody>();
    expect(body.data.map((a) => a.id)).toEqual(ALL_A);
    expect(new Set(body.data.map((a) => a.tenantId))).toEqual(new Set([TENANT_A]));
    expect(body.meta.total).toBe(6);
  });
});
