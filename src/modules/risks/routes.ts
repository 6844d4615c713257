import type { FastifyInstance } from 'fastify';
import { cursorBinding, type CursorCodec } from '../../http/cursor.js';
import { listBody, sendJson } from '../../http/respond.js';
import type { Storage } from '../../storage/index.js';
import { listRisksQuery, type ListRisksQuery } from './schemas.js';

export const RISKS_PATH = '/v1/tenant/risks';

export async function riskRoutes(app: FastifyInstance, { storage, cursors }: { storage: Storage; cursors: CursorCodec }): Promise<void> {
  app.get<{ Querystring: ListRisksQuery }>(RISKS_PATH, { schema: { querystring: listRisksQuery.schema } }, async (request, reply) => {
    const query = request.query;
    const binding = cursorBinding(request.tenant.tenantId, query);
    const after = query.cursor === undefined ? undefined : cursors.decode(query.cursor, binding);
    const { items, total, next } = await storage.listRisks(request.tenant, query, after);
    const cursor = next === null ? null : cursors.encode(next, binding);
    return sendJson(reply, listBody(items, { perPage: query.perPage, total, cursor }));
  });
}
