// The metric endpoints' queries and answers (pipeline.md §6): open, opened, resolved and overdue findings per interval,
// and time-to-fix by severity. The arithmetic is src/domain/remediation.ts; the rollup they read, src/storage/changes/rollup.ts.
import { Type, type Static } from 'typebox';
import { findingSeverities } from './enums.js';
import { querySpec, type ParsedQuery } from './query.js';
import { metricIntervals } from './remediation.js';
import { CalendarDate, NullableNumber, StringEnum } from './schema.js';

const range = {
  from: {
    kind: 'datetime',
    description:
      'First day of the range (a yyyy-MM-dd date, or a date-time whose UTC day is taken); default: 89 days before `to`.',
  },
  to: { kind: 'datetime', description: 'Last day of the range, included (as `from`); default: today (UTC).' },
} as const;
const rangeOptions = { ranges: [['from', 'to']] as [string, string][] };

export const findingMetricsSpec = querySpec(
  {
    ...range,
    interval: {
      kind: 'enum',
      values: metricIntervals,
      default: 'day',
      description: 'day, week (ISO, from Monday) or month, in UTC.',
    },
  },
  rangeOptions,
);
export type FindingMetricsQuery = ParsedQuery<typeof findingMetricsSpec.params>;

export const remediationMetricsSpec = querySpec(range, rangeOptions);
export type RemediationMetricsQuery = ParsedQuery<typeof remediationMetricsSpec.params>;

const bySeverity = <T extends Parameters<typeof Type.Object>[0]>(fields: T, description: string) =>
  Type.Object(
    Object.fromEntries(findingSeverities.map((s) => [s, Type.Object(fields)])) as Record<
      (typeof findingSeverities)[number],
      ReturnType<typeof Type.Object<T>>
    >,
    { description },
  );

export const FindingInterval = Type.Object({
  start: CalendarDate(),
  end: CalendarDate(),
  severities: bySeverity(
    {
      open: Type.Integer({ description: 'Open at the end of the interval (or of today, for one not over).' }),
      opened: Type.Integer({ description: 'First observed, or reopened, in the interval.' }),
      resolved: Type.Integer({ description: 'Resolved in the interval.' }),
      overdue: Type.Integer({ description: 'Open, not exempted and past their due date at the end of the interval.' }),
    },
    'By severity.',
  ),
});
export type FindingInterval = Static<typeof FindingInterval>;

export const FindingMetrics = Type.Object({
  data: Type.Array(FindingInterval),
  meta: Type.Object({ from: CalendarDate(), to: CalendarDate(), interval: StringEnum(metricIntervals) }),
});

export const SeverityRemediation = Type.Object({
  resolved: Type.Integer({ description: 'Findings resolved in the range.' }),
  medianDaysToFix: NullableNumber('Median whole days from firstObservedAt to resolution; null: none resolved.'),
  p90DaysToFix: NullableNumber('90th percentile of the same (linear between ranks).'),
  withinSlaShare: NullableNumber('Share (0–1) of the resolutions with a due date that came by it; null: none had one.'),
});
export type SeverityRemediation = Static<typeof SeverityRemediation>;

export const RemediationMetrics = Type.Object({
  data: bySeverity(SeverityRemediation.properties, 'By severity.'),
  meta: Type.Object({ from: CalendarDate(), to: CalendarDate() }),
});
export type RemediationMetrics = Static<typeof RemediationMetrics>;
