// `updatedSince` on the three lists (pipeline.md §4): a record observed again, or changed in the log, at or after the
// time. Changes are made at known times: a risk command takes its own time, an import commits now.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixture, R1, riskFixture } from '../fixtures.js';
import { importRecords, setupWithKeys, TENANT_A, TENANT_B, type TestContext } from '../helpers.js';
import { assetRecord, findingRecord, type ImportRecord } from '../records.js';

let ctx: TestContext;
let key: string;
let keyB: string;
beforeAll(async () => {
  const set = await setupWithKeys(fixture, [TENANT_A, TENANT_B] as const);
  ctx = set.ctx;
  [key, keyB] = set.keys;
});
afterAll(async () => ctx.close());

const OLD = { firstObservedAt: '2024-01-01T00:00:00Z', lastObservedAt: '2024-01-02T00:00:00Z' };
const X = 'sirn:assets:since-x';
const Y = 'sirn:assets:since-y';

const importing = async (records: ImportRecord[]) =>
  expect((await importRecords(ctx.storage, records)).problems).toEqual([]);

type Json = Record<string, unknown>;
async function list(path: string, as = key): Promise<Json[]> {
  const res = await ctx.app.inject({ url: path, headers: { authorization: `Bearer ${as}` } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{ data: Json[] }>().data;
}
const ids = async (path: string, as = key) => (await list(path, as)).map((r) => r.id);
const findings = async (since: string, as = key) =>
  (await list(`/v1/tenant/vulnerabilities?perPage=2000&updatedSince=${since}`, as)).map(
    (r) => `${String(r.assetId)} ${String(r.vulnerabilityId)}`,
  );

describe('updatedSince', () => {
  it('finds nothing after every write', async () => {
    const later = '2099-01-01T00:00:00Z';
    expect(await ids(`/v1/tenant/assets?updatedSince=${later}`)).toEqual([]);
    expect(await findings(later)).toEqual([]);
    expect(await ids(`/v1/tenant/risks?updatedSince=${later}`)).toEqual([]);
  });

  it('finds a finding changed after the time though observed before it, and its asset', async () => {
    await importing([assetRecord(X, OLD), findingRecord(X, 'CVE-2024-1111', 'LOW', OLD), assetRecord(Y, OLD)]);
    const before = new Date().toISOString();
    expect(await findings(before)).toEqual([]);
    // The same observation times; the severity moves: a finding.updated committed now.
    await importing([assetRecord(X, OLD), findingRecord(X, 'CVE-2024-1111', 'CRITICAL', OLD), assetRecord(Y, OLD)]);
    expect(await findings(before)).toEqual([`${X} CVE-2024-1111`]);
    // Its asset's counts moved with it; Y, written again unchanged, is not updated.
    expect(await ids(`/v1/tenant/assets?updatedSince=${before}`)).toEqual([X]);
    // Other filters combine with AND; the page's total counts the same records.
    const res = await ctx.app.inject({
      url: `/v1/tenant/vulnerabilities?updatedSince=${before}&severityLevels=LOW`,
      headers: { authorization: `Bearer ${key}` },
    });
    expect(res.json()).toMatchObject({ data: [], meta: { total: 0 } });
    // Another tenant's key sees none of it.
    expect(await findings(before, keyB)).toEqual([]);
    expect(await ids(`/v1/tenant/assets?updatedSince=${before}`, keyB)).toEqual([]);
  });

  it('finds a record observed at or after the time', async () => {
    const observed = { firstObservedAt: '2024-01-01T00:00:00Z', lastObservedAt: '2098-03-01T00:00:00Z' };
    await importing([assetRecord(Y, observed), findingRecord(Y, 'CVE-2024-2222', 'LOW', observed)]);
    expect(await ids('/v1/tenant/assets?updatedSince=2098-03-01')).toEqual([Y]);
    expect(await findings('2098-03-01T00:00:00Z')).toEqual([`${Y} CVE-2024-2222`]);
    expect(await ids('/v1/tenant/assets?updatedSince=2098-03-01T00:00:00.001Z')).toEqual([]);
  });

  it('finds a risk by the time of its last change', async () => {
    await importing(riskFixture.filter((r) => r[1].tenantId === TENANT_A));
    expect(await ctx.storage.setRiskLifecycle(TENANT_A, R1, 'DISMISSED_ACCEPTED', '2097-06-01T00:00:00.000Z')).toBe(
      true,
    );
    expect(await ids('/v1/tenant/risks?updatedSince=2097-06-01')).toEqual([R1]);
    expect(await ids('/v1/tenant/risks?updatedSince=2097-06-02')).toEqual([]);
    expect(await ids('/v1/tenant/risks?updatedSince=2097-06-01', keyB)).toEqual([]);
    // Exports take the filter as the pages do.
    const res = await ctx.app.inject({
      url: '/v1/tenant/risks?updatedSince=2097-06-01&format=ndjson',
      headers: { authorization: `Bearer ${key}` },
    });
    expect(
      res.body
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => (JSON.parse(line) as Json).id),
    ).toEqual([R1]);
  });

  it.each(['assets', 'vulnerabilities', 'risks'])('on %s is 400 for a value that is not a date-time', async (name) => {
    const res = await ctx.app.inject({
      url: `/v1/tenant/${name}?updatedSince=yesterday`,
      headers: { authorization: `Bearer ${key}` },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ errors: [{ code: 'invalid_parameter', field: 'updatedSince' }] });
  });
});
