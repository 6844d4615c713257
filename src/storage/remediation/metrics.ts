// The metric reads (pipeline.md §6) over the rollup (src/storage/changes/rollup.ts): a few thousand rows for a year of
// a tenant, whatever its size, summed here by interval and severity.
import { findingSeverities, type FindingSeverity } from '../../domain/enums.js';
import type { FindingInterval, RemediationMetrics, SeverityRemediation } from '../../domain/metrics.js';
import { addDays, intervalEnd, intervalStart, intervalsOf, quantile } from '../../domain/remediation.js';
import { severityOfLevel } from '../../domain/scans.js';
import { latestPastDue } from '../read/vulnerabilities/filtered.js';
import type { TenantReader } from '../tx/read.js';
import type { Storage } from '../types.js';

type Counts = FindingInterval['severities'][FindingSeverity];
const zero = (): Counts => ({ open: 0, opened: 0, resolved: 0, overdue: 0 });
const bySeverity = <T>(make: () => T): Record<FindingSeverity, T> =>
  Object.fromEntries(findingSeverities.map((s) => [s, make()])) as Record<FindingSeverity, T>;

export function metricStore(read: TenantReader): Pick<Storage, 'findingMetrics' | 'remediationMetrics'> {
  return {
    findingMetrics: (scope, { from, to, today }, interval) =>
      read(scope.tenantId, async (db) => {
        const intervals = intervalsOf(from, to, interval);
        const first = intervals[0]?.[0] ?? from;
        const last = intervals[intervals.length - 1]?.[1] ?? to;
        // Everything before the first interval as one sum per severity; the days of the intervals one by one.
        const before = await db
          .selectFrom('finding_days')
          .select((eb) => [
            'severity',
            eb.fn.sum<number | string>('open_delta').as('open'),
            eb.fn.sum<number | string>('overdue_delta').as('overdue'),
          ])
          .where('tenant_id', '=', scope.tenantId)
          .where('day', '<', first)
          .groupBy('severity')
          .execute();
        const days = await db
          .selectFrom('finding_days')
          .select(['day', 'severity', 'opened', 'resolved', 'open_delta', 'overdue_delta'])
          .where('tenant_id', '=', scope.tenantId)
          .where('day', '>=', first)
          .where('day', '<=', last)
          .orderBy('day')
          .execute();
        const open = bySeverity(() => 0);
        const overdue = bySeverity(() => 0);
        for (const r of before) {
          const s = severityOfLevel(r.severity);
          open[s] += Number(r.open);
          overdue[s] += Number(r.overdue);
        }
        const out: FindingInterval[] = [];
        let i = 0;
        for (const [start, end] of intervals) {
          const severities = bySeverity(zero);
          for (; i < days.length && days[i]!.day <= end; i += 1) {
            const r = days[i]!;
            const s = severityOfLevel(r.severity);
            severities[s].opened += r.opened;
            severities[s].resolved += r.resolved;
            open[s] += r.open_delta;
            // Overdue counts are known up to today's end: the due dates after it are not passed yet, for this
            // interval or any later one.
            if (r.day <= today) overdue[s] += r.overdue_delta;
          }
          for (const s of findingSeverities) {
            severities[s].open = open[s];
            severities[s].overdue = overdue[s];
          }
          out.push({ start, end, severities });
        }
        return out;
      }),

    remediationMetrics: (scope, { from, to }) =>
      read(scope.tenantId, async (db) => {
        // The range's whole months from the months' table, its other days from the days' (docs/DESIGN.md §106).
        const monthOf = (day: string) => intervalStart(day, 'month');
        const fullFrom = from === monthOf(from) ? from : intervalEnd(monthOf(from), 'month');
        const afterTo = addDays(to, 1);
        const fullUntil = intervalEnd(monthOf(to), 'month') === afterTo ? afterTo : monthOf(to);
        const grouped = (
          table: 'finding_fixes' | 'finding_fix_months',
          column: 'day' | 'month',
          lo: string,
          hi: string,
        ) =>
          db
            .selectFrom(table)
            .select((eb) => ['severity', 'fix_days', 'within', eb.fn.sum<number | string>('count').as('n')])
            .where('tenant_id', '=', scope.tenantId)
            .where(column, '>=', lo)
            .where(column, '<=', hi)
            .groupBy(['severity', 'fix_days', 'within'])
            .execute();
        const rows =
          fullFrom < fullUntil
            ? [
                ...(await grouped(
                  'finding_fix_months',
                  'month',
                  fullFrom.slice(0, 7),
                  addDays(fullUntil, -1).slice(0, 7),
                )),
                ...(from < fullFrom ? await grouped('finding_fixes', 'day', from, addDays(fullFrom, -1)) : []),
                ...(fullUntil <= to ? await grouped('finding_fixes', 'day', fullUntil, to) : []),
              ]
            : await grouped('finding_fixes', 'day', from, to);
        const histograms = bySeverity(() => new Map<number, number>());
        const within = bySeverity(() => ({ met: 0, due: 0 }));
        for (const r of rows) {
          const s = severityOfLevel(r.severity);
          const n = Number(r.n);
          histograms[s].set(r.fix_days, (histograms[s].get(r.fix_days) ?? 0) + n);
          if (r.within >= 0) {
            within[s].due += n;
            if (r.within === 1) within[s].met += n;
          }
        }
        const data = bySeverity<SeverityRemediation>(() => ({
          resolved: 0,
          medianDaysToFix: null,
          p90DaysToFix: null,
          withinSlaShare: null,
        }));
        for (const s of findingSeverities) {
          const histogram = [...histograms[s]].sort(([a], [b]) => a - b);
          data[s] = {
            resolved: histogram.reduce((sum, [, n]) => sum + n, 0),
            medianDaysToFix: quantile(histogram, 0.5),
            p90DaysToFix: quantile(histogram, 0.9),
            withinSlaShare: within[s].due === 0 ? null : within[s].met / within[s].due,
          };
        }
        return data satisfies RemediationMetrics['data'];
      }),
  };
}

/** The due dates either side of `now` (docs/DESIGN.md §107): the latest before it, the earliest at or after it. */
export function dueBoundaryStore(read: TenantReader): Pick<Storage, 'dueBoundaries'> {
  return {
    dueBoundaries: (scope, now) =>
      read(scope.tenantId, async (db) => {
        const next = await db
          .selectFrom('vulnerabilities')
          .select('due_at')
          .where('tenant_id', '=', scope.tenantId)
          .where('is_exempted', '=', 0)
          .where('due_at', '>=', now)
          .orderBy('due_at')
          .limit(1)
          .executeTakeFirst();
        return { last: await latestPastDue(db, scope.tenantId, now), next: next?.due_at ?? null };
      }),
  };
}
