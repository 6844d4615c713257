// The remediation rollup on each database, from real writes at set times (pipeline.md §6): scans of one image on known
// days open, resolve and reopen findings; every interval's open, opened, resolved and overdue counts, and the days to
// fix, are what those days make by hand. A late write (an import of a finding first observed weeks before) lands on its
// own days; a new SLA moves due dates from the day it is set, never the past.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importRecords, openTestStorage, TENANT_A, TEST_DIALECTS, type TestStorage } from '../../helpers.js';
import { assetRecord, findingRecord } from '../../records.js';
import { tellStory } from '../../remediation.js';

const scope = { tenantId: TENANT_A, dataVersion: 0 };
const TODAY = '2026-12-01';

describe.each(TEST_DIALECTS)('remediation rollup (%s)', (dialect) => {
  let t: TestStorage;
  beforeAll(async () => {
    t = await openTestStorage(dialect);
    await tellStory(t.storage);
  });
  afterAll(() => t.dispose());

  /** Counts of a severity for each day of the range: [open, opened, resolved, overdue]. */
  const daily = async (severity: 'CRITICAL' | 'HIGH' | 'LOW', from: string, to: string) =>
    Object.fromEntries(
      (await t.storage.findingMetrics(scope, { from, to, today: TODAY }, 'day')).map((d) => {
        const c = d.severities[severity];
        return [d.start, [c.open, c.opened, c.resolved, c.overdue]];
      }),
    );

  it('counts each day: open at its end, opened, resolved, overdue at its end', async () => {
    const critical = await daily('CRITICAL', '2026-01-01', '2026-02-11');
    expect(critical['2026-01-01']).toEqual([2, 2, 0, 0]);
    expect(critical['2026-01-05']).toEqual([2, 0, 0, 0]);
    expect(critical['2026-01-06']).toEqual([2, 1, 1, 0]);
    // C2, first seen Jan 1 10:00, due 15 days later: overdue at the end of Jan 16 until it is fixed on Jan 20.
    expect(critical['2026-01-15']).toEqual([2, 0, 0, 0]);
    expect(critical['2026-01-16']).toEqual([2, 0, 0, 1]);
    expect(critical['2026-01-19']).toEqual([2, 0, 0, 1]);
    expect(critical['2026-01-20']).toEqual([1, 0, 1, 0]);
    // C3, first seen Jan 6, due Jan 21.
    expect(critical['2026-01-21']).toEqual([1, 0, 0, 1]);
    expect(critical['2026-02-09']).toEqual([1, 0, 0, 1]);
    // C3 fixed; C1 back (reopened with its first observation of Jan 1, so overdue at once).
    expect(critical['2026-02-10']).toEqual([1, 1, 1, 1]);
    expect(critical['2026-02-11']).toEqual([1, 0, 0, 1]);
    const high = await daily('HIGH', '2026-01-30', '2026-02-10');
    expect(high['2026-01-30']).toEqual([1, 0, 0, 0]);
    expect(high['2026-01-31']).toEqual([1, 0, 0, 1]);
    expect(high['2026-02-10']).toEqual([0, 0, 1, 0]);
    const low = await daily('LOW', '2026-01-01', '2026-02-10');
    expect(Object.values(low).every(([open, , , overdue]) => open === 1 && overdue === 0)).toBe(true);
  });

  it('sums weeks (from Monday) and months', async () => {
    const weeks = await t.storage.findingMetrics(scope, { from: '2026-01-01', to: '2026-01-20', today: TODAY }, 'week');
    expect(weeks.map((w) => [w.start, w.end])).toEqual([
      ['2025-12-29', '2026-01-04'],
      ['2026-01-05', '2026-01-11'],
      ['2026-01-12', '2026-01-18'],
      ['2026-01-19', '2026-01-25'],
    ]);
    expect(weeks.map((w) => w.severities.CRITICAL)).toEqual([
      { open: 2, opened: 2, resolved: 0, overdue: 0 },
      { open: 2, opened: 1, resolved: 1, overdue: 0 },
      { open: 2, opened: 0, resolved: 0, overdue: 1 },
      { open: 1, opened: 0, resolved: 1, overdue: 1 },
    ]);
    const months = await t.storage.findingMetrics(
      scope,
      { from: '2026-01-15', to: '2026-02-10', today: TODAY },
      'month',
    );
    expect(months.map((m) => [m.start, m.end, m.severities.CRITICAL, m.severities.HIGH.overdue])).toEqual([
      ['2026-01-01', '2026-01-31', { open: 1, opened: 3, resolved: 2, overdue: 1 }, 1],
      ['2026-02-01', '2026-02-28', { open: 1, opened: 1, resolved: 1, overdue: 1 }, 0],
    ]);
  });

  it('an interval not over counts the overdue findings as of today', async () => {
    const [month] = await t.storage.findingMetrics(
      scope,
      { from: '2026-01-01', to: '2026-01-31', today: '2026-01-10' },
      'month',
    );
    // C2 is due on Jan 16: not overdue yet on Jan 10, although it was by the month's end.
    expect(month!.severities.CRITICAL.overdue).toBe(0);
  });

  it('time to fix by severity: count, median and 90th percentile of whole days, share within the SLA', async () => {
    const data = await t.storage.remediationMetrics(scope, { from: '2026-01-01', to: '2026-02-28', today: TODAY });
    // C1 fixed in 5 days (due Jan 16: within), C2 in 19 (not), C3 in 35 (not).
    expect(data.CRITICAL).toEqual({ resolved: 3, medianDaysToFix: 19, p90DaysToFix: 31.8, withinSlaShare: 1 / 3 });
    expect(data.HIGH).toEqual({ resolved: 1, medianDaysToFix: 40, p90DaysToFix: 40, withinSlaShare: 0 });
    expect(data.LOW).toEqual({ resolved: 0, medianDaysToFix: null, p90DaysToFix: null, withinSlaShare: null });
    const january = await t.storage.remediationMetrics(scope, { from: '2026-01-01', to: '2026-01-31', today: TODAY });
    expect(january.CRITICAL).toEqual({ resolved: 2, medianDaysToFix: 12, p90DaysToFix: 17.6, withinSlaShare: 0.5 });
  });

  it('a late write lands on the days its data names', async () => {
    const { problems } = await importRecords(t.storage, [
      assetRecord('sirn:late'),
      findingRecord('sirn:late', 'CVE-2026-9001', 'CRITICAL', {
        firstObservedAt: '2026-01-03T08:00:00Z',
        lastObservedAt: '2026-01-03T08:00:00Z',
      }),
    ]);
    expect(problems).toEqual([]);
    const critical = await daily('CRITICAL', '2026-01-02', '2026-01-18');
    expect(critical['2026-01-02']).toEqual([2, 0, 0, 0]);
    expect(critical['2026-01-03']).toEqual([3, 1, 0, 0]);
    // Due on Jan 18 at 08:00, with C2 overdue since Jan 16.
    expect(critical['2026-01-17']).toEqual([3, 0, 0, 1]);
    expect(critical['2026-01-18']).toEqual([3, 0, 0, 2]);
  });

  it('a new SLA moves due dates from its day on, not before', async () => {
    const before = await daily('CRITICAL', '2026-01-16', '2026-01-16');
    const moved = await t.storage.setTenantSla(TENANT_A, { CRITICAL: 60, HIGH: 30 }, `${TODAY}T12:00:00.000Z`);
    expect(moved).toEqual({ moved: expect.any(Number) });
    expect(moved!.moved).toBeGreaterThan(0);
    expect(await t.storage.tenantSla(TENANT_A)).toEqual({ CRITICAL: 60, HIGH: 30 });
    expect(await daily('CRITICAL', '2026-01-16', '2026-01-16')).toEqual(before);
    // C1 (Jan 1 + 60 days) and the late one (Jan 3 + 60) are overdue today either way: nothing moves today.
    const [today] = await t.storage.findingMetrics(scope, { from: TODAY, to: TODAY, today: TODAY }, 'day');
    expect(today!.severities.CRITICAL.overdue).toBe(2);
    // LOW lost its SLA: L1 overdue since June 30 as it was known then, and no longer from today.
    const [july] = await t.storage.findingMetrics(scope, { from: '2026-07-01', to: '2026-07-01', today: TODAY }, 'day');
    expect(july!.severities.LOW.overdue).toBe(1);
    expect(today!.severities.LOW.overdue).toBe(0);
    expect(await t.storage.setTenantSla('33333333-3333-4333-8333-333333333333', {}, TODAY)).toBeUndefined();
  });
});
