// The remediation rules (pipeline.md §6): a due date by the SLA or KEV's when earlier, overdue, intervals, quantiles.
import { describe, expect, it } from 'vitest';
import { dueAt, fixDays, intervalsOf, isOverdue, quantile, slaDaysProblem } from '../../src/domain/remediation.js';

describe('dueAt', () => {
  const first = '2026-01-01T10:00:00.000Z';
  it('is the first observation plus the SLA, or the end of the KEV due date when earlier', () => {
    expect(dueAt(first, 15, null)).toBe('2026-01-16T10:00:00.000Z');
    expect(dueAt(first, 15, '2026-01-05')).toBe('2026-01-05T23:59:59.999Z');
    expect(dueAt(first, 15, '2026-02-01')).toBe('2026-01-16T10:00:00.000Z');
    expect(dueAt(first, undefined, '2026-02-01')).toBe('2026-02-01T23:59:59.999Z');
    expect(dueAt(first, undefined, null)).toBeNull();
  });
  it('is overdue once past, unless exempted or without a due date', () => {
    expect(isOverdue('2026-01-16T10:00:00.000Z', false, '2026-01-16T10:00:00.001Z')).toBe(true);
    expect(isOverdue('2026-01-16T10:00:00.000Z', false, '2026-01-16T10:00:00.000Z')).toBe(false);
    expect(isOverdue('2026-01-16T10:00:00.000Z', true, '2027-01-01T00:00:00.000Z')).toBe(false);
    expect(isOverdue(null, false, '2027-01-01T00:00:00.000Z')).toBe(false);
  });
  it('takes whole days of 0 to 3650 as SLA days', () => {
    expect([0, 7, 3650].map(slaDaysProblem)).toEqual([null, null, null]);
    expect([-1, 1.5, 3651, Number.NaN].every((d) => slaDaysProblem(d) !== null)).toBe(true);
  });
});

describe('metric arithmetic', () => {
  it('counts whole days elapsed', () => {
    expect(fixDays('2026-01-01T10:00:00.000Z', '2026-01-06T09:59:59.999Z')).toBe(4);
    expect(fixDays('2026-01-01T10:00:00.000Z', '2026-01-06T10:00:00.000Z')).toBe(5);
  });
  it('cuts ranges into UTC days, ISO weeks from Monday and calendar months', () => {
    expect(intervalsOf('2026-02-27', '2026-03-01', 'day')).toHaveLength(3);
    expect(intervalsOf('2026-01-01', '2026-01-05', 'week')).toEqual([
      ['2025-12-29', '2026-01-04'],
      ['2026-01-05', '2026-01-11'],
    ]);
    expect(intervalsOf('2024-02-10', '2024-03-01', 'month')).toEqual([
      ['2024-02-01', '2024-02-29'],
      ['2024-03-01', '2024-03-31'],
    ]);
  });
  it('interpolates quantiles between ranks, as percentile_cont', () => {
    expect(quantile([], 0.5)).toBeNull();
    expect(
      quantile(
        [
          [5, 1],
          [19, 1],
          [35, 1],
        ],
        0.5,
      ),
    ).toBe(19);
    expect(
      quantile(
        [
          [5, 1],
          [19, 1],
          [35, 1],
        ],
        0.9,
      ),
    ).toBeCloseTo(31.8);
    expect(
      quantile(
        [
          [3, 2],
          [10, 2],
        ],
        0.5,
      ),
    ).toBe(6.5);
  });
});
