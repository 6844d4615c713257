import type { FastifyInstance } from 'fastify';
import { listBody, pageMeta, sendJson } from '../../http/respond.js';
import type { Storage } from '../../storage/index.js';
import { listVulnerabilitiesQuery, type ListVulnerabilitiesQuery } from './schemas.js';

export const VULNERABILITIES_PATH = '/v1/tenant/vulnerabilities';

export async function vulnerabilityRoutes(app: FastifyInstance, { storage }: { storage: Storage }): Promise<void> {
  app.get<{ Querystring: ListVulnerabilitiesQuery }>(VULNERABILITIES_PATH, {
    schema: { querystring: listVulnerabilitiesQuery.schema },
  }, async (request, reply) => {
    const query = request.query;
    const { items, total } = await storage.listVulnerabilities(request.tenant, query);
    return sendJson(reply, listBody(items, pageMeta(query.page, query.perPage, total)));
  });
}
