// Conditional GETs answered from the tag alone, and bodies kept by tag (src/http/caching.ts, compression.ts).
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { keptBodies, negotiateCoding } from '../../src/http/compression.js';
import { A1, A2, fixture, R1, riskFixture } from '../fixtures.js';
import { importRecords, setupWithKeys, TENANT_A, TENANT_B, type TestContext } from '../helpers.js';

let ctx: TestContext;
let keyA: string;
let keyA2: string;
let keyB: string;
let statements: string[];

beforeAll(async () => {
  ({
    ctx,
    statements,
    keys: [keyA, keyA2, keyB],
    // The statements of each request are counted: no count columns read in the background (src/storage/read/assets/counts.ts).
  } = await setupWithKeys([...fixture, ...riskFixture], [TENANT_A, TENANT_A, TENANT_B], { countColumnsMaxRows: 0 }));
});
afterAll(async () => ctx.close());

const get = (url: string, key = keyA, headers: Record<string, string> = {}) =>
  ctx.app.inject({ url, headers: { authorization: `Bearer ${key}`, ...headers } });

const tagOf = async (url: string, key = keyA): Promise<string> => {
  const res = await get(url, key);
  expect(res.statusCode, res.body).toBe(200);
  return String(res.headers.etag);
};

describe('a 304 without reading the data', () => {
  it('answers a matching If-None-Match after the key lookup only, with the tag and the caching headers', async () => {
    for (const url of [
      '/v1/tenant/assets?perPage=2',
      `/v1/tenant/assets/${A1}`,
      '/v1/tenant/risks',
      '/v1/tenant/vulnerabilities',
    ]) {
      const etag = await tagOf(url);
      statements.length = 0;
      const res = await get(url, keyA, { 'if-none-match': etag });
      expect(res.statusCode).toBe(304);
      expect(res.body).toBe('');
      expect(res.headers).toMatchObject({
        etag,
        'cache-control': 'private',
        vary: 'Authorization, Accept, Accept-Encoding',
      });
      // The key lookup (and at most the once-a-minute lastUsedAt write): no tenant table, no transaction.
      expect(statements.length).toBeGreaterThan(0);
      for (const statement of statements) expect(statement).toMatch(/^(select|update) .*"api_keys"/i);
    }
  });

  it('If-None-Match: * is a 304 only where there is a body: a missing asset is still 404', async () => {
    expect((await get('/v1/tenant/assets?perPage=1', keyA, { 'if-none-match': '*' })).statusCode).toBe(304);
    const missing = await get('/v1/tenant/assets/no-such-asset', keyA, { 'if-none-match': '*' });
    expect(missing.statusCode).toBe(404);
    expect(missing.headers.etag).toBeUndefined();
  });

  it('errors are never tagged nor answered 304: a bad query, a bad key', async () => {
    const etag = await tagOf('/v1/tenant/assets?perPage=1');
    const bad = await get('/v1/tenant/assets?perPage=0', keyA, { 'if-none-match': etag });
    expect(bad.statusCode).toBe(400);
    expect(bad.headers.etag).toBeUndefined();
    const unauthorized = await get('/v1/tenant/assets?perPage=1', `${keyA}x`, { 'if-none-match': etag });
    expect(unauthorized.statusCode).toBe(401);
    expect(unauthorized.headers.etag).toBeUndefined();
  });
});

describe('what a tag depends on', () => {
  it('a write that bumps the data version changes the tags of the tenant, and only of that tenant', async () => {
    const assets = '/v1/tenant/assets?perPage=3';
    const risks = '/v1/tenant/risks?perPage=3';
    const [beforeA, beforeRisks, beforeB] = [await tagOf(assets), await tagOf(risks), await tagOf(assets, keyB)];
    // An import for tenant A (the same asset, renamed).
    const renamed = fixture.find(([kind, r]) => kind === 'asset' && r.id === A2 && r.tenantId === TENANT_A)!;
    expect((await importRecords(ctx.storage, [['asset', { ...renamed[1], name: 'payments-api-2' }]])).problems).toEqual(
      [],
    );
    const afterImport = await get(assets, keyA, { 'if-none-match': beforeA });
    expect(afterImport.statusCode).toBe(200);
    expect(afterImport.headers.etag).not.toBe(beforeA);
    expect(await tagOf(assets, keyB)).toBe(beforeB);
    // A risk dismissed through the CLI's operation.
    const beforeDismissal = await tagOf(risks);
    expect(beforeDismissal).not.toBe(beforeRisks);
    expect(await ctx.storage.setRiskLifecycle(TENANT_A, R1, 'DISMISSED_ACCEPTED', '2024-07-01T00:00:00.000Z')).toBe(
      true,
    );
    expect((await get(risks, keyA, { 'if-none-match': beforeDismissal })).statusCode).toBe(200);
    expect(await tagOf(risks)).not.toBe(beforeDismissal);
  });

  it('another tenant with the same request gets another tag; two keys of one tenant share it', async () => {
    for (const url of ['/v1/tenant/assets?perPage=1', `/v1/tenant/assets/${A1}`, '/v1/tenant/risks']) {
      const a = await tagOf(url);
      expect(await tagOf(url, keyA2)).toBe(a);
      const b = await get(url, keyB, { 'if-none-match': a });
      expect(b.statusCode).toBe(200);
      expect(b.headers.etag).not.toBe(a);
    }
  });

  it('different queries get different tags, the same query spelled differently the same tag', async () => {
    const distinct = [
      '/v1/tenant/assets',
      '/v1/tenant/assets?perPage=2',
      '/v1/tenant/assets?perPage=2&page=2',
      '/v1/tenant/assets?perPage=2&sortBy=name',
      '/v1/tenant/assets?perPage=2&sortBy=name&sortOrder=DESC',
      '/v1/tenant/assets?providers=AWS',
      '/v1/tenant/assets?providers=AWS,GCP',
      '/v1/tenant/assets?query=web',
      '/v1/tenant/assets?query=Web',
      `/v1/tenant/assets/${A1}`,
      `/v1/tenant/assets/${A1}?include=rawData`,
      `/v1/tenant/assets/${A2}`,
      '/v1/tenant/vulnerabilities',
      '/v1/tenant/vulnerabilities?isExempted=true',
      '/v1/tenant/risks',
      '/v1/tenant/risks?perPage=2',
      '/v1/tenant/risks?fields=id,score',
      '/v1/tenant/risks?fields=score,id',
    ];
    const tags = await Promise.all(distinct.map((url) => tagOf(url)));
    expect(new Set(tags).size).toBe(distinct.length);
    const cursor = (await get('/v1/tenant/risks?perPage=2')).json<{ meta: { cursor: string } }>().meta.cursor;
    const next = `/v1/tenant/risks?perPage=2&cursor=${encodeURIComponent(cursor)}`;
    expect(tags).not.toContain(await tagOf(next));

    const same = [
      ['/v1/tenant/assets?perPage=2&sortBy=name', '/v1/tenant/assets?sortBy=name&perPage=2'],
      ['/v1/tenant/assets?perPage=2&sortBy=name', '/v1/tenant/assets?perPage=2&sortBy=NAME'],
      ['/v1/tenant/assets', '/v1/tenant/assets?perPage=100&page=1'],
      ['/v1/tenant/assets?providers=AWS', '/v1/tenant/assets?providers=aws,AWS'],
      [`/v1/tenant/assets/${A1}`, `/v1/tenant/assets/${encodeURIComponent(A1)}`],
    ];
    for (const [a, b] of same) {
      const [ra, rb] = [await get(a!), await get(b!)];
      expect(rb.headers.etag, `${a} vs ${b}`).toBe(ra.headers.etag);
      expect(rb.body).toBe(ra.body);
    }
  });
});

describe('compression', () => {
  const url = '/v1/tenant/assets';

  it('sends gzip or brotli of the same body under the same tag, the second time from the kept bytes', async () => {
    const plain = await get(url);
    for (const [coding, decode] of [
      ['gzip', gunzipSync],
      ['br', brotliDecompressSync],
    ] as const) {
      const first = await get(url, keyA, { 'accept-encoding': coding });
      const second = await get(url, keyA, { 'accept-encoding': coding });
      for (const res of [first, second]) {
        expect(res.headers['content-encoding']).toBe(coding);
        expect(res.headers.etag).toBe(plain.headers.etag);
        expect(res.headers.vary).toBe('Authorization, Accept, Accept-Encoding');
        expect(decode(res.rawPayload).toString()).toBe(plain.body);
      }
      expect(second.rawPayload.equals(first.rawPayload)).toBe(true);
      // Kept bytes are answered from the tag, without reading the data to build the body again.
      statements.length = 0;
      const third = await get(url, keyA, { 'accept-encoding': coding });
      expect(third.rawPayload.equals(first.rawPayload)).toBe(true);
      expect(third.headers).toMatchObject({
        'content-encoding': coding,
        'content-type': 'application/json; charset=utf-8',
        etag: plain.headers.etag,
        'cache-control': 'private',
      });
      for (const statement of statements) expect(statement).toMatch(/^(select|update) .*"api_keys"/i);
      // Another coding of the same tag is still built and compressed.
      const other = await get(url, keyA, { 'accept-encoding': coding === 'gzip' ? 'br' : 'gzip' });
      expect(other.headers['content-encoding']).toBe(coding === 'gzip' ? 'br' : 'gzip');
      // A revalidation is a 304 whatever the encoding asked.
      const revalidated = await get(url, keyA, {
        'accept-encoding': coding,
        'if-none-match': String(plain.headers.etag),
      });
      expect(revalidated.statusCode).toBe(304);
    }
  });

  it('keeps the uncompressed body too: a repeat without Accept-Encoding is answered from it, per tenant and version', async () => {
    const page = `/v1/tenant/assets/${A2}`;
    const first = await get(page);
    expect(first.statusCode).toBe(200);
    expect(first.headers['content-encoding']).toBeUndefined();
    statements.length = 0;
    const again = await get(page);
    expect(again.rawPayload.equals(first.rawPayload)).toBe(true);
    expect(again.headers).toMatchObject({
      'content-type': 'application/json; charset=utf-8',
      etag: first.headers.etag,
      'cache-control': 'private',
      vary: 'Authorization, Accept, Accept-Encoding',
    });
    expect(again.headers['content-encoding']).toBeUndefined();
    expect(statements.length).toBeGreaterThan(0);
    for (const statement of statements) expect(statement).toMatch(/^(select|update) .*"api_keys"/i);
    // The other tenant's request of the same path is its own (a missing asset there, never tenant A's kept body).
    const other = await get(page, keyB);
    expect(other.statusCode).toBe(404);
    expect(other.body).not.toContain(A2);
    // A write moves the tenant's version: the body is built again from the new data, then kept in turn.
    const asset = fixture.find(([kind, r]) => kind === 'asset' && r.id === A2 && r.tenantId === TENANT_A)!;
    expect(
      (await importRecords(ctx.storage, [['asset', { ...asset[1], name: 'kept-then-renamed' }]])).problems,
    ).toEqual([]);
    const renamed = await get(page);
    expect(renamed.headers.etag).not.toBe(first.headers.etag);
    expect(JSON.parse(renamed.body)).toMatchObject({ data: { id: A2, name: 'kept-then-renamed' } });
  });

  it('holds kept bodies within the budget, oldest out first, each in memory of its own', () => {
    const bodies = keptBodies({ threshold: 1024, gzipLevel: 1, brotliQuality: 1, cacheBytes: 64 });
    // Eight bytes each: nine do not fit in 64, and the least recently used leaves.
    const body = (n: number) =>
      Buffer.concat([Buffer.from('{"n":'), Buffer.from(String(n).padStart(2, '0')), Buffer.from('}')]);
    expect(body(1).buffer.byteLength).toBeGreaterThan(8); // Node's shared slab, as a page's small body would be
    for (let n = 1; n <= 8; n += 1) bodies.keep(`t${n}`, body(n), `p${n}`);
    expect(bodies.kept('t1', undefined)?.body.toString()).toBe('{"n":01}'); // now the most recently used
    bodies.keep('t9', body(9), undefined);
    expect(bodies.kept('t2', undefined)).toBeUndefined();
    for (const n of [1, 3, 9]) {
      const kept = bodies.kept(`t${n}`, undefined);
      expect(kept?.body.equals(body(n))).toBe(true);
      expect(kept?.body.buffer.byteLength).toBe(8);
      // The position a body was kept with comes back with it.
      expect(kept?.position).toBe(n === 9 ? undefined : `p${n}`);
    }
    // Over an eighth of the budget: sent, never kept.
    bodies.keep('big', Buffer.alloc(9), undefined);
    expect(bodies.kept('big', undefined)).toBeUndefined();
  });

  it('works with the cache turned off, and keeps a small body uncompressed', async () => {
    const app = await buildApp({
      storage: ctx.apiStorage,
      http: { compression: { threshold: 1024, gzipLevel: 6, brotliQuality: 4, cacheBytes: 0 } },
    });
    try {
      const plain = await app.inject({ url, headers: { authorization: `Bearer ${keyA}` } });
      const gzip = await app.inject({ url, headers: { authorization: `Bearer ${keyA}`, 'accept-encoding': 'gzip' } });
      expect(gzip.headers['content-encoding']).toBe('gzip');
      expect(gunzipSync(gzip.rawPayload).toString()).toBe(plain.body);
      const small = await app.inject({
        url: '/v1/tenant/assets?perPage=1&query=nothing-matches',
        headers: { authorization: `Bearer ${keyA}`, 'accept-encoding': 'gzip' },
      });
      expect(small.headers['content-encoding']).toBeUndefined();
    } finally {
      await app.close();
    }
  });

  it('negotiates by quality, brotli first on a tie, x-gzip and * understood, q=0 refused', () => {
    const pick = (header?: string) => negotiateCoding(header === undefined ? {} : { 'accept-encoding': header });
    expect(pick()).toBeUndefined();
    expect(pick('identity')).toBeUndefined();
    expect(pick('gzip, deflate')).toBe('gzip');
    expect(pick('gzip, deflate, br')).toBe('br');
    expect(pick('br;q=0.5, gzip')).toBe('gzip');
    expect(pick('GZIP;q=0.8, br;q=0.9')).toBe('br');
    expect(pick('x-gzip')).toBe('gzip');
    expect(pick('*')).toBe('br');
    expect(pick('*, br;q=0')).toBe('gzip');
    expect(pick('br;q=0, gzip;q=0')).toBeUndefined();
    expect(pick('deflate')).toBeUndefined();
  });
});
