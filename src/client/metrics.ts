// Remediation over time in the typed client (pipeline.md §6): the findings per interval and the time to fix.
import type { Static } from 'typebox';
import type {
  FindingMetrics as FindingMetricsSchema,
  findingMetricsSpec,
  RemediationMetrics as RemediationMetricsSchema,
  remediationMetricsSpec,
} from '../domain/metrics.js';
import type { QueryInput } from '../domain/query.js';
import type { Transport } from './transport.js';

export const FINDING_METRICS_PATH = '/v1/tenant/metrics/findings';
export const REMEDIATION_METRICS_PATH = '/v1/tenant/metrics/remediation';

export type FindingMetrics = Static<typeof FindingMetricsSchema>;
export type RemediationMetrics = Static<typeof RemediationMetricsSchema>;
export type FindingMetricsParams = QueryInput<typeof findingMetricsSpec.params>;
export type RemediationMetricsParams = QueryInput<typeof remediationMetricsSpec.params>;

export interface MetricsApi {
  /** Open (at the end), opened, resolved and overdue (at the end) findings of each interval, by severity. */
  findings(params?: FindingMetricsParams): Promise<FindingMetrics>;
  /** The resolutions of the range by severity: count, median and 90th percentile days to fix, share within the SLA. */
  remediation(params?: RemediationMetricsParams): Promise<RemediationMetrics>;
}

export const metricsApi = (http: Transport): MetricsApi => ({
  findings: (params) => http.json(FINDING_METRICS_PATH, params ?? {}),
  remediation: (params) => http.json(REMEDIATION_METRICS_PATH, params ?? {}),
});
