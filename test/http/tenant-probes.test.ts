// Cross-tenant probes on a real database of each dialect: tenant A's key asks for everything tenant B holds (its ids,
// names and values in every filter, path, embed, export, cursor and ETag), and no answer may carry a trace of B. The
// same probes run against the app over a storage with a planted leak, and must find it: a probe suite that cannot
// fail proves nothing.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import type { Storage } from '../../src/storage/index.js';
import { A1, fixture, R1, riskFixture } from '../fixtures.js';
import { ORG_B, setupWithKeys, TENANT_B, TENANT_A, type TestContext } from '../helpers.js';

/** Values only tenant B's records hold: none may appear in an answer to tenant A. */
const B_MARKERS = [TENANT_B, ORG_B, 'tenant-b-web', 'sirn:assets:b-only', 'only-b', 'CVE-2024-9999', 'tenant-b-type'];
const B_ONLY_ASSET = 'sirn:assets:b-only';

let ctx: TestContext;
let keyA: string;
let keyB: string;
beforeAll(async () => {
  const set = await setupWithKeys([...fixture, ...riskFixture], [TENANT_A, TENANT_B]);
  ctx = set.ctx;
  [keyA, keyB] = set.keys;
});
afterAll(async () => ctx.close());

const enc = encodeURIComponent;

/** Every probe: A's requests naming B's ids and values, in each place a request can name them. */
const PROBES = [
  '/v1/tenant/assets?perPage=1000',
  `/v1/tenant/assets?ids=${enc(B_ONLY_ASSET)},${enc(A1)}`,
  '/v1/tenant/assets?query=b-only',
  '/v1/tenant/assets?query=tenant-b',
  '/v1/tenant/assets?metadata=only-b',
  '/v1/tenant/assets?regions=ap-south-1',
  '/v1/tenant/assets?providers=GCP&perPage=1000',
  '/v1/tenant/assets?format=ndjson',
  '/v1/tenant/assets?format=csv',
  `/v1/tenant/assets/${enc(B_ONLY_ASSET)}`,
  `/v1/tenant/assets/${enc(B_ONLY_ASSET)}?include=rawData`,
  `/v1/tenant/assets/${enc(A1)}?include=rawData`,
  `/v1/tenant/assets/${A1}`,
  `/v1/tenant/assets/${enc(B_ONLY_ASSET)}/sbom`,
  `/v1/tenant/assets/${enc(A1)}/sbom`,
  '/v1/tenant/vulnerabilities?perPage=2000',
  '/v1/tenant/vulnerabilities?vulnerabilityIds=CVE-2024-9999',
  `/v1/tenant/vulnerabilities?assetIds=${enc(A1)},${enc(B_ONLY_ASSET)}&perPage=2000`,
  '/v1/tenant/vulnerabilities?regions=ap-south-1',
  '/v1/tenant/vulnerabilities?isExempted=true',
  '/v1/tenant/vulnerabilities?isOverdue=true&perPage=2000',
  '/v1/tenant/vulnerabilities?dueAtEnd=2100-01-01&perPage=2000',
  '/v1/tenant/vulnerabilities?format=ndjson',
  '/v1/tenant/vulnerabilities?format=csv&isExempted=true',
  '/v1/tenant/risks?include=primaryAsset,integration',
  `/v1/tenant/risks?ids=${R1}&include=primaryAsset`,
  '/v1/tenant/risks?riskTypeIds=tenant-b-type',
  `/v1/tenant/risks?primaryAssetIds=${enc(A1)}&include=primaryAsset`,
  '/v1/tenant/risks?format=ndjson&include=primaryAsset,integration',
  '/v1/tenant/risks?format=csv&include=primaryAsset',
  '/v1/tenant/changes?perPage=1000',
  `/v1/tenant/changes?assetIds=${enc(A1)},${enc(B_ONLY_ASSET)}&perPage=1000`,
  '/v1/tenant/changes?vulnerabilityIds=CVE-2024-9999',
  `/v1/tenant/changes?riskIds=${R1}&types=risk.opened`,
  '/v1/tenant/changes?format=ndjson',
  '/v1/tenant/changes?format=csv&since=2000-01-01',
];

/** Runs every probe as A on `app`; returns what leaked (the probe and the marker), and checks every answer's status. */
async function probe(app: FastifyInstance): Promise<string[]> {
  const leaks: string[] = [];
  const asA = { authorization: `Bearer ${keyA}` };
  const asB = { authorization: `Bearer ${keyB}` };
  const record = (url: string, body: string) => {
    for (const marker of B_MARKERS) if (body.includes(marker)) leaks.push(`${url} holds ${marker}`);
  };
  for (const url of PROBES) {
    const res = await app.inject({ url, headers: asA });
    expect(res.statusCode, url).toBeLessThan(500);
    record(url, res.body);
  }
  // B's own answers, replayed by A: B's cursors are refused, B's tags never earn A a 304.
  for (const url of ['/v1/tenant/risks?perPage=1', '/v1/tenant/vulnerabilities?perPage=1&includeTotal=false']) {
    const b = await app.inject({ url, headers: asB });
    const cursor = b.json<{ meta: { cursor: string | null } }>().meta.cursor;
    if (cursor === null) continue;
    const replayed = await app.inject({ url: `${url}&cursor=${enc(cursor)}`, headers: asA });
    if (replayed.statusCode !== 400) leaks.push(`${url}: B's cursor answered ${replayed.statusCode} to A`);
    record(`${url} with B's cursor`, replayed.body);
  }
  // B's change-log positions, from the log's own cursor and from a list's header, are refused to A.
  const log = await app.inject({ url: '/v1/tenant/changes?perPage=1', headers: asB });
  const header = (await app.inject({ url: '/v1/tenant/assets?perPage=1', headers: asB })).headers[
    'secinv-changes-cursor'
  ];
  for (const cursor of [log.json<{ meta: { cursor: string } }>().meta.cursor, String(header)]) {
    const replayed = await app.inject({ url: `/v1/tenant/changes?cursor=${enc(cursor)}`, headers: asA });
    if (replayed.statusCode !== 400) leaks.push(`B's change cursor answered ${replayed.statusCode} to A`);
    record("changes with B's cursor", replayed.body);
  }
  for (const url of PROBES.slice(0, 4)) {
    const b = await app.inject({ url, headers: asB });
    const etag = b.headers.etag;
    if (typeof etag !== 'string') continue;
    const replayed = await app.inject({ url, headers: { ...asA, 'if-none-match': etag } });
    if (replayed.statusCode === 304) leaks.push(`${url}: B's ETag answered 304 to A`);
  }
  return leaks;
}

describe('tenant A probing for tenant B', () => {
  it('sees nothing of B, in any answer', async () => {
    // The probes reach B's data where it exists: B's answers do hold the markers.
    const b = await ctx.app.inject({
      url: `/v1/tenant/assets/${enc(A1)}?include=rawData`,
      headers: { authorization: `Bearer ${keyB}` },
    });
    expect(b.body).toContain('only-b');
    expect(await probe(ctx.app)).toEqual([]);
  });

  it('the probes find a leak planted in storage (a read, a list, the log or an export made for the wrong tenant)', async () => {
    const other = (scope: { tenantId: string; dataVersion: number }) => ({
      ...scope,
      tenantId: scope.tenantId === TENANT_A ? TENANT_B : scope.tenantId,
    });
    const plants: Record<string, Partial<Storage>> = {
      getAsset: { getAsset: (scope, id, raw) => ctx.apiStorage.getAsset(other(scope), id, raw) },
      listRisks: { listRisks: (scope, query, after) => ctx.apiStorage.listRisks(other(scope), query, after) },
      listChanges: { listChanges: (scope, query, after) => ctx.apiStorage.listChanges(other(scope), query, after) },
      openSnapshot: { openSnapshot: (scope) => ctx.apiStorage.openSnapshot(other(scope)) },
    };
    for (const [name, plant] of Object.entries(plants)) {
      const leaky = await buildApp({ storage: { ...ctx.apiStorage, ...plant } });
      try {
        expect((await probe(leaky)).length, name).toBeGreaterThan(0);
      } finally {
        await leaky.close();
      }
    }
  });
});
