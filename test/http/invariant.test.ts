// The derived counts agree with the list: for every asset, the sum of its four vulnerability counts equals the total of
// GET /v1/tenant/vulnerabilities?assetIds=<id>&severityLevels=CRITICAL,HIGH,MEDIUM,LOW — on a generated tenant with
// exemptions of every kind.
import { Readable } from 'node:stream';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { generateRecords } from '../../src/generate/generator.js';
import { importSources } from '../../src/import/importer.js';
import { createKey, setup, type TestContext } from '../helpers.js';

let ctx: TestContext;
let key: string;
beforeAll(async () => {
  ctx = await setup();
  const lines = [...generateRecords({ seed: 'invariant', tenants: 1, assets: 300, findingsPerAsset: 6, risks: 10 })];
  const result = await importSources(
    ctx.storage,
    [{ name: 'generated', open: () => Readable.from([Buffer.from(lines.join('\n'))]) }],
    { dryRun: false },
  );
  expect(result.problems).toEqual([]);
  const tenantId = (await ctx.storage.listTenants())[0]!.tenantId;
  key = await createKey(ctx.storage, tenantId);
}, 120_000);
afterAll(async () => ctx.close());

const get = async (path: string) => {
  const res = await ctx.app.inject({ url: path, headers: { authorization: `Bearer ${key}` } });
  expect(res.statusCode).toBe(200);
  return res.json();
};

// Hundreds of requests (or commands) in one test: on PostgreSQL beside three other files, past the default 30 s.
it("every asset's four counts sum to the total of its counted findings", async () => {
  const assets = (await get('/v1/tenant/assets?perPage=1000')).data as Record<string, number | string | boolean>[];
  expect(assets).toHaveLength(300);
  const exempted = (await get('/v1/tenant/vulnerabilities?isExempted=true&perPage=2000')).meta.total as number;
  expect(exempted).toBeGreaterThan(0);
  let checked = 0;
  for (const asset of assets) {
    const counts =
      Number(asset.numberOfCriticalVulnerabilities) +
      Number(asset.numberOfHighVulnerabilities) +
      Number(asset.numberOfMediumVulnerabilities) +
      Number(asset.numberOfLowVulnerabilities);
    const page = await get(
      `/v1/tenant/vulnerabilities?assetIds=${encodeURIComponent(String(asset.id))}&severityLevels=CRITICAL,HIGH,MEDIUM,LOW`,
    );
    expect(page.meta.total, String(asset.id)).toBe(counts);
    const all = await get(`/v1/tenant/vulnerabilities?assetIds=${encodeURIComponent(String(asset.id))}`);
    expect(asset.isVulnerable, String(asset.id)).toBe(all.meta.total > 0);
    checked += 1;
  }
  expect(checked).toBe(300);
}, 90_000);
