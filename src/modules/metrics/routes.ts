// Remediation over time (pipeline.md §6): `GET /v1/tenant/metrics/findings` (open, opened, resolved and overdue
// findings per day, week or month) and `GET /v1/tenant/metrics/remediation` (time to fix and the share within the SLA),
// both read from the rollup the writes keep in step with the change log. Days are UTC; a range is of whole days.
import type { FastifyInstance } from 'fastify';
import { apiError } from '../../domain/errors.js';
import {
  FindingMetrics,
  RemediationMetrics,
  type FindingMetricsQuery,
  type RemediationMetricsQuery,
} from '../../domain/metrics.js';
import { addDays, dayOf, MAX_METRIC_RANGE_DAYS } from '../../domain/remediation.js';
import { errorResponses, jsonResponse } from '../../http/docs.js';
import { sendJson } from '../../http/respond.js';
import type { MetricRange, Storage } from '../../storage/index.js';
import {
  findingMetricsExample,
  findingMetricsQuery,
  remediationMetricsExample,
  remediationMetricsQuery,
} from './schemas.js';

export const FINDING_METRICS_PATH = '/v1/tenant/metrics/findings';
export const REMEDIATION_METRICS_PATH = '/v1/tenant/metrics/remediation';

const DEFAULT_DAYS = 90;

/** The range's days: `to` defaults to today, `from` to 89 days before it; at most five years. */
function rangeOf(query: { from?: string | undefined; to?: string | undefined }): MetricRange {
  const today = dayOf(Date.now());
  const to = query.to === undefined ? today : query.to.slice(0, 10);
  const from = query.from === undefined ? addDays(to, 1 - DEFAULT_DAYS) : query.from.slice(0, 10);
  if (from > to) throw apiError('invalid_parameter', 'from must not be after to', 'from');
  if (from < addDays(to, -MAX_METRIC_RANGE_DAYS))
    throw apiError(
      'invalid_parameter',
      `from and to must be at most ${MAX_METRIC_RANGE_DAYS} days apart (five years)`,
      'to',
    );
  return { from, to, today };
}

const RANGE_DOC =
  'Days are UTC. `from` and `to` (dates, or date-times whose UTC day is taken) are both included; `to` defaults to ' +
  `today and \`from\` to ${DEFAULT_DAYS - 1} days before \`to\`; at most five years apart. `;

const badRange = {
  errors: [{ code: 'invalid_parameter' as const, field: 'from', message: 'from must not be after to' }],
};

export async function metricRoutes(app: FastifyInstance, { storage }: { storage: Storage }): Promise<void> {
  app.get<{ Querystring: FindingMetricsQuery }>(
    FINDING_METRICS_PATH,
    {
      schema: {
        operationId: 'getFindingMetrics',
        summary: 'Open, opened, resolved and overdue findings over time',
        description:
          'For each interval (a day, an ISO week from Monday, or a calendar month) that meets the range, by severity: ' +
          'the findings open at its end, those opened (first observed, or reopened) and resolved in it, and those ' +
          'overdue at its end (open, not exempted, past `dueAt`). An interval not over counts as of the end of today. ' +
          'A finding is open from its `firstObservedAt` to the write that resolved it; a finding imported late counts ' +
          'from its `firstObservedAt` too. A change of severity moves a finding between severities without opening ' +
          'or resolving it. ' +
          RANGE_DOC,
        tags: ['Metrics'],
        querystring: findingMetricsQuery.schema,
        response: {
          200: jsonResponse('The intervals of the range.', FindingMetrics, findingMetricsExample),
          ...errorResponses({ badRequest: badRange }),
        },
      },
    },
    async (request, reply) => {
      const query = request.query;
      const range = rangeOf(query);
      const data = await storage.findingMetrics(request.tenant, range, query.interval);
      return sendJson(
        reply,
        Buffer.from(JSON.stringify({ data, meta: { from: range.from, to: range.to, interval: query.interval } })),
      );
    },
  );

  app.get<{ Querystring: RemediationMetricsQuery }>(
    REMEDIATION_METRICS_PATH,
    {
      schema: {
        operationId: 'getRemediationMetrics',
        summary: 'Time to fix by severity',
        description:
          'The findings resolved in the range, by severity: how many, the median and 90th percentile of the whole ' +
          'days from `firstObservedAt` to the resolution (linear between ranks; null when none), and the share of ' +
          'those that had a due date that were resolved by it (null when none had one). A finding resolved, reopened ' +
          'and resolved again counts at each resolution, from its first observation. ' +
          RANGE_DOC,
        tags: ['Metrics'],
        querystring: remediationMetricsQuery.schema,
        response: {
          200: jsonResponse('The resolutions of the range.', RemediationMetrics, remediationMetricsExample),
          ...errorResponses({ badRequest: badRange }),
        },
      },
    },
    async (request, reply) => {
      const range = rangeOf(request.query);
      const data = await storage.remediationMetrics(request.tenant, range);
      return sendJson(reply, Buffer.from(JSON.stringify({ data, meta: { from: range.from, to: range.to } })));
    },
  );
}
