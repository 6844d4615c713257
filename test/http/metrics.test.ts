// The remediation endpoints over HTTP (pipeline.md §6), on a tenant whose history is built by scans at set times
// (test/storage/remediation/rollup.test.ts tells the story and checks every day of it): the answers' shape and
// arithmetic, the bad requests, another tenant's key, and the due dates and overdue filters of the finding list.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, setupWithKeys, TENANT_A, TENANT_B, type TestContext } from '../helpers.js';
import { tenantRecord } from '../records.js';
import { tellStory } from '../remediation.js';

type Json = Record<string, unknown>;

let ctx: TestContext;
let key: string;
let keyB: string;
beforeAll(async () => {
  const set = await setupWithKeys([tenantRecord(TENANT_B)], [TENANT_B] as const);
  ctx = set.ctx;
  [keyB] = set.keys;
  await tellStory(ctx.storage);
  key = await createKey(ctx.storage, TENANT_A);
});
afterAll(async () => ctx.close());

const get = (url: string, as = key) => ctx.app.inject({ url, headers: { authorization: `Bearer ${as}` } });
const json = async (url: string, as = key) => {
  const res = await get(url, as);
  expect(res.statusCode, res.body).toBe(200);
  return res.json<Json>();
};

describe('GET /v1/tenant/metrics/findings', () => {
  it('answers each interval by severity', async () => {
    const body = await json('/v1/tenant/metrics/findings?from=2026-01-01&to=2026-02-28&interval=month');
    expect(body.meta).toEqual({ from: '2026-01-01', to: '2026-02-28', interval: 'month' });
    const [january, february] = body.data as { start: string; end: string; severities: Record<string, Json> }[];
    expect([january!.start, january!.end, february!.start, february!.end]).toEqual([
      '2026-01-01',
      '2026-01-31',
      '2026-02-01',
      '2026-02-28',
    ]);
    expect(january!.severities.CRITICAL).toEqual({ open: 1, opened: 3, resolved: 2, overdue: 1 });
    expect(february!.severities.HIGH).toEqual({ open: 0, opened: 0, resolved: 1, overdue: 0 });
    expect(Object.keys(january!.severities)).toEqual(['CRITICAL', 'HIGH', 'MEDIUM', 'LOW', 'INFORMATIONAL', 'UNKNOWN']);
  });

  it('defaults to the last 90 days by day', async () => {
    const body = await json('/v1/tenant/metrics/findings');
    const data = body.data as { start: string }[];
    expect(data).toHaveLength(90);
    expect(data[89]!.start).toBe(new Date().toISOString().slice(0, 10));
    expect((body.meta as Json).interval).toBe('day');
  });

  it('refuses from after to, a range over five years, an unknown interval, naming the field', async () => {
    const problems = async (query: string) => {
      const res = await get(`/v1/tenant/metrics/findings?${query}`);
      expect(res.statusCode).toBe(400);
      return (res.json<{ errors: Json[] }>().errors ?? []).map((e) => [e.code, e.field]);
    };
    expect(await problems('from=2026-03-01&to=2026-02-01')).toEqual([['invalid_parameter', 'from']]);
    expect(await problems('from=2020-01-01&to=2026-01-02')).toEqual([['invalid_parameter', 'to']]);
    expect(await problems('interval=year')).toEqual([['invalid_parameter', 'interval']]);
    expect(await problems('from=yesterday')).toEqual([['invalid_parameter', 'from']]);
    expect(await problems('since=2026-01-01')).toEqual([['unknown_parameter', 'since']]);
  });

  it("another tenant's key sees its own, empty, history", async () => {
    const body = await json('/v1/tenant/metrics/findings?from=2026-01-01&to=2026-01-31&interval=month', keyB);
    const [january] = body.data as { severities: Record<string, Json> }[];
    expect(january!.severities.CRITICAL).toEqual({ open: 0, opened: 0, resolved: 0, overdue: 0 });
  });
});

describe('GET /v1/tenant/metrics/remediation', () => {
  it('answers the count, median and 90th percentile of days to fix, and the share within the SLA', async () => {
    const body = await json('/v1/tenant/metrics/remediation?from=2026-01-01&to=2026-02-28');
    const data = body.data as Record<string, Json>;
    expect(data.CRITICAL).toEqual({ resolved: 3, medianDaysToFix: 19, p90DaysToFix: 31.8, withinSlaShare: 1 / 3 });
    expect(data.HIGH).toEqual({ resolved: 1, medianDaysToFix: 40, p90DaysToFix: 40, withinSlaShare: 0 });
    expect(data.MEDIUM).toEqual({ resolved: 0, medianDaysToFix: null, p90DaysToFix: null, withinSlaShare: null });
    expect(body.meta).toEqual({ from: '2026-01-01', to: '2026-02-28' });
  });

  it('is tagged by the day: asked again, the same tag is a 304', async () => {
    const first = await get('/v1/tenant/metrics/remediation?from=2026-01-01&to=2026-02-28');
    const etag = first.headers.etag as string;
    expect(etag).toMatch(/^W\//);
    const again = await ctx.app.inject({
      url: '/v1/tenant/metrics/remediation?from=2026-01-01&to=2026-02-28',
      headers: { authorization: `Bearer ${key}`, 'if-none-match': etag },
    });
    expect(again.statusCode).toBe(304);
  });
});

describe('due dates on the finding list', () => {
  const findings = async (query: string) =>
    (await json(`/v1/tenant/vulnerabilities?perPage=100&${query}`)).data as Json[];

  it('serves dueAt and isOverdue on each finding', async () => {
    const all = await findings('');
    const byId = new Map(all.map((f) => [f.vulnerabilityId, f]));
    // C1 reopened on Feb 10 with its first observation of Jan 1: due 15 days after, overdue now.
    expect(byId.get('CVE-2026-1001')).toMatchObject({ dueAt: '2026-01-16T10:00:00.000Z', isOverdue: true });
    // L1 (LOW, 180 days) due on Jun 30.
    expect(byId.get('CVE-2026-3001')).toMatchObject({ dueAt: '2026-06-30T10:00:00.000Z', isOverdue: true });
  });

  it('filters by isOverdue and dueAtEnd', async () => {
    const overdue = await findings('isOverdue=true');
    expect(overdue.map((f) => f.vulnerabilityId).sort()).toEqual(['CVE-2026-1001', 'CVE-2026-3001']);
    expect(await findings('isOverdue=false')).toEqual([]);
    const early = await findings('dueAtEnd=2026-02-01');
    expect(early.map((f) => f.vulnerabilityId)).toEqual(['CVE-2026-1001']);
    const res = await get('/v1/tenant/vulnerabilities?isOverdue=maybe');
    expect(res.statusCode).toBe(400);
    expect(res.json<{ errors: Json[] }>().errors[0]).toMatchObject({ field: 'isOverdue' });
  });
});
