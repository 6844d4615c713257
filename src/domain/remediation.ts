// Remediation over time (pipeline.md §6, docs/DESIGN.md §106): a tenant's SLA, a finding's due date and whether it is
// overdue, the metric intervals and the time-to-fix statistics. Pure: the writes store `dueAt` from here, the reads
// compute `isOverdue` from here, the metrics arithmetic is here.
import { findingSeverities, severityLevelValues, type FindingSeverity } from './enums.js';

/** Days to fix a finding of each severity; a severity without an entry has no due date. */
export type Sla = Partial<Record<FindingSeverity, number>>;

export const DEFAULT_SLA: Readonly<Sla> = { CRITICAL: 15, HIGH: 30, MEDIUM: 90, LOW: 180 };

/** The longest SLA accepted, in days (ten years). */
export const MAX_SLA_DAYS = 3650;

const DAY_MS = 86_400_000;

/** An SLA's days as a problem message, or null when they are whole days from 0 to MAX_SLA_DAYS. */
export function slaDaysProblem(value: unknown): string | null {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_SLA_DAYS)
    return `must be a whole number of days from 0 to ${MAX_SLA_DAYS}`;
  return null;
}

/** The stored SLA (JSON or null) as an SLA: null is the defaults. */
export function slaOf(stored: string | null): Sla {
  if (stored === null) return { ...DEFAULT_SLA };
  const parsed = JSON.parse(stored) as Record<string, unknown>;
  const sla: Sla = {};
  for (const severity of findingSeverities) {
    const days = parsed[severity];
    if (typeof days === 'number') sla[severity] = days;
  }
  return sla;
}

/** The SLA's days by severity value (CRITICAL 5 … UNKNOWN 0), for the writers' per-finding arithmetic. */
export const slaByLevel = (sla: Sla): (number | undefined)[] => {
  const byLevel: (number | undefined)[] = [];
  for (const severity of findingSeverities) byLevel[severityLevelValues[severity]] = sla[severity];
  return byLevel;
};

/**
 * A KEV `dueDate` (a calendar date) as an instant: the end of that UTC day, since CISA's date is the last day to fix
 * by.
 */
export const kevDueInstant = (dueDate: string): string => `${dueDate}T23:59:59.999Z`;

/**
 * A finding's due date: its first observation plus the SLA of its severity, or its KEV entry's due date when that is
 * earlier (or when the severity has no SLA); null when neither applies.
 */
export function dueAt(
  firstObservedAt: string,
  slaDays: number | undefined,
  kevDueDate: string | null | undefined,
): string | null {
  const bySla = slaDays === undefined ? null : new Date(Date.parse(firstObservedAt) + slaDays * DAY_MS).toISOString();
  const byKev = kevDueDate ? kevDueInstant(kevDueDate) : null;
  if (bySla === null) return byKev;
  if (byKev === null) return bySla;
  return byKev < bySla ? byKev : bySla;
}

/** Open (every listed finding is), not exempted and past its due date. */
export const isOverdue = (due: string | null, exempted: boolean, now: string): boolean =>
  due !== null && !exempted && due < now;

/** Whole days elapsed from the first observation to the resolution. */
export const fixDays = (firstObservedAt: string, resolvedAt: string): number =>
  Math.floor((Date.parse(resolvedAt) - Date.parse(firstObservedAt)) / DAY_MS);

export const metricIntervals = ['day', 'week', 'month'] as const;
export type MetricInterval = (typeof metricIntervals)[number];

/** The longest range the metrics answer, in days (five years). */
export const MAX_METRIC_RANGE_DAYS = 5 * 366;

/** `YYYY-MM-DD` of a UTC day. */
export const dayOf = (instant: string | number): string =>
  new Date(typeof instant === 'number' ? instant : Date.parse(instant)).toISOString().slice(0, 10);

const dayMs = (day: string): number => Date.parse(`${day}T00:00:00.000Z`);
export const addDays = (day: string, days: number): string => dayOf(dayMs(day) + days * DAY_MS);

/** The first day of the interval `day` is in: itself, the Monday of its ISO week, the first of its month. */
export function intervalStart(day: string, interval: MetricInterval): string {
  if (interval === 'day') return day;
  if (interval === 'month') return `${day.slice(0, 7)}-01`;
  const weekday = (new Date(dayMs(day)).getUTCDay() + 6) % 7;
  return addDays(day, -weekday);
}

/** The first day after the interval that starts on `start`. */
export function intervalEnd(start: string, interval: MetricInterval): string {
  if (interval === 'day') return addDays(start, 1);
  if (interval === 'week') return addDays(start, 7);
  const d = new Date(dayMs(start));
  return dayOf(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1));
}

/** The intervals that meet the days from `from` to `to` (both included), as [first day, last day]. */
export function intervalsOf(from: string, to: string, interval: MetricInterval): [string, string][] {
  const out: [string, string][] = [];
  for (let start = intervalStart(from, interval); start <= to; start = intervalEnd(start, interval))
    out.push([start, addDays(intervalEnd(start, interval), -1)]);
  return out;
}

/**
 * The `p`-quantile (0–1) of the values given as counts by value, sorted by value: linear interpolation between the
 * closest ranks (as PostgreSQL's percentile_cont); null when there are none.
 */
export function quantile(histogram: readonly [value: number, count: number][], p: number): number | null {
  const total = histogram.reduce((sum, [, count]) => sum + count, 0);
  if (total === 0) return null;
  const rank = p * (total - 1);
  const valueAt = (index: number): number => {
    let seen = 0;
    for (const [value, count] of histogram) {
      seen += count;
      if (index < seen) return value;
    }
    return histogram[histogram.length - 1]![0];
  };
  const low = Math.floor(rank);
  const lower = valueAt(low);
  const upper = valueAt(Math.ceil(rank));
  return lower + (upper - lower) * (rank - low);
}
