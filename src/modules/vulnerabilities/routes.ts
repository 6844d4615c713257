import type { FastifyInstance } from 'fastify';
import { errorResponses, jsonResponse } from '../../http/docs.js';
import { listBody, pageMeta, sendJson } from '../../http/respond.js';
import type { Storage } from '../../storage/index.js';
import {
  ListVulnerabilitiesResponse,
  listVulnerabilitiesExample,
  listVulnerabilitiesQuery,
  type ListVulnerabilitiesQuery,
} from './schemas.js';

export const VULNERABILITIES_PATH = '/v1/tenant/vulnerabilities';

export async function vulnerabilityRoutes(app: FastifyInstance, { storage }: { storage: Storage }): Promise<void> {
  app.get<{ Querystring: ListVulnerabilitiesQuery }>(
    VULNERABILITIES_PATH,
    {
      schema: {
        operationId: 'listVulnerabilities',
        summary: 'List vulnerability findings',
        description:
          'The vulnerability findings (one vulnerability on one asset) of the tenant of the key, filtered, sorted and ' +
          'in numbered pages.\n\n' +
          'Default order: `severityLevelValue` descending (CRITICAL 5 … UNKNOWN 0); ties break by (`assetId`, ' +
          "`vulnerabilityId`) in the sort's direction. Package filters (`packageName`, `targetName`, `targetType`, " +
          '`targetClass`) must all hold for one same package of the finding. By default only the findings no exemption ' +
          'matches are listed; `isExempted=true` lists the exempted ones instead. Each finding carries the exemptions that ' +
          'match it.\n\n' +
          'Request rules: as on every operation (see List assets); `400` lists every problem.',
        tags: ['Vulnerabilities'],
        querystring: listVulnerabilitiesQuery.schema,
        response: {
          200: jsonResponse(
            'A page of findings and its position.',
            ListVulnerabilitiesResponse,
            listVulnerabilitiesExample,
          ),
          ...errorResponses({
            badRequest: {
              errors: [
                { code: 'invalid_parameter', field: 'assetIds', message: 'assetIds must list at most 10 items' },
              ],
            },
          }),
        },
      },
    },
    async (request, reply) => {
      const query = request.query;
      const { items, total } = await storage.listVulnerabilities(request.tenant, query);
      return sendJson(reply, listBody(items, pageMeta(query.page, query.perPage, total)));
    },
  );
}
