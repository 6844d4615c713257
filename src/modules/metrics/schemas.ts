// HTTP side of the remediation metrics (pipeline.md §6): the two queries as query tables and the answers' examples for
// the OpenAPI document. The answers' schemas and the arithmetic are the domain's (src/domain/metrics.ts, remediation.ts).
import { findingMetricsSpec, remediationMetricsSpec } from '../../domain/metrics.js';
import { queryExamples } from '../../http/docs.js';
import { defineQuery } from '../../http/query.js';

export const findingMetricsQuery = defineQuery(findingMetricsSpec);
export const remediationMetricsQuery = defineQuery(remediationMetricsSpec);
queryExamples(findingMetricsQuery, { from: '2026-09-01', to: '2026-11-30', interval: 'week' });
queryExamples(remediationMetricsQuery, { from: '2026-09-01', to: '2026-11-30' });

const counts = (open: number, opened: number, resolved: number, overdue: number) => ({
  open,
  opened,
  resolved,
  overdue,
});
const none = counts(0, 0, 0, 0);

export const findingMetricsExample = {
  data: [
    {
      start: '2026-11-02',
      end: '2026-11-08',
      severities: {
        CRITICAL: counts(12, 3, 5, 2),
        HIGH: counts(140, 22, 18, 9),
        MEDIUM: counts(410, 51, 40, 0),
        LOW: counts(95, 4, 2, 0),
        INFORMATIONAL: none,
        UNKNOWN: counts(3, 0, 0, 0),
      },
    },
  ],
  meta: { from: '2026-11-02', to: '2026-11-08', interval: 'week' },
};

const fixes = (resolved: number, median: number | null, p90: number | null, share: number | null) => ({
  resolved,
  medianDaysToFix: median,
  p90DaysToFix: p90,
  withinSlaShare: share,
});

export const remediationMetricsExample = {
  data: {
    CRITICAL: fixes(41, 6, 13.5, 0.93),
    HIGH: fixes(310, 19, 44, 0.71),
    MEDIUM: fixes(505, 37, 120.2, 0.8),
    LOW: fixes(12, 60.5, 170, 0.92),
    INFORMATIONAL: fixes(0, null, null, null),
    UNKNOWN: fixes(2, 3, 3.9, null),
  },
  meta: { from: '2026-09-01', to: '2026-11-30' },
};
