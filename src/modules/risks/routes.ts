import type { FastifyInstance } from 'fastify';
import { cursorBinding, type CursorCodec } from '../../http/cursor.js';
import { errorResponses, listResponse } from '../../http/docs.js';
import { batchesOf, EXPORT_DOC, negotiateFormat } from '../../http/export.js';
import { sendSnapshotExport, tellPosition } from '../../http/snapshot.js';
import { riskFieldNames, riskIncludes } from '../../domain/risks.js';
import { listBody, sendJson } from '../../http/respond.js';
import type { RiskPosition, Storage } from '../../storage/index.js';
import { ListRisksResponse, listRisksExample, listRisksQuery, type ListRisksQuery } from './schemas.js';

export const RISKS_PATH = '/v1/tenant/risks';

export async function riskRoutes(
  app: FastifyInstance,
  { storage, cursors }: { storage: Storage; cursors: CursorCodec },
): Promise<void> {
  app.get<{ Querystring: ListRisksQuery }>(
    RISKS_PATH,
    {
      preValidation: negotiateFormat,
      schema: {
        operationId: 'listRisks',
        summary: 'List risks',
        description:
          'The risks of the tenant of the key, filtered, sorted and in cursor-paginated batches, optionally with the ' +
          'primary asset and the integration of each risk embedded.\n\n' +
          'Default order: `discoveredAt` descending; ties break by `id` in the same direction. To read every risk, pass ' +
          '`meta.cursor` back as `cursor`, with the same filters, `sortBy`, `sortOrder`, `fields` and `include` (`perPage` ' +
          'may change), until it is `null`. A cursor used with another query or key, or altered, is `400 invalid_cursor`.\n\n' +
          '`fields` returns only the named risk properties (so, with `fields`, the items of `data` hold only those; `include` ' +
          'is independent of it). `include=primaryAsset` adds `primaryAsset` (the asset as the asset operations return it, ' +
          'without `rawData`, or `null` when it is not in the inventory), `include=integration` adds `integration` (or `null`).\n\n' +
          EXPORT_DOC +
          'Request rules: as on every operation (see List assets); `400` lists every problem.',
        tags: ['Risks'],
        querystring: listRisksQuery.schema,
        response: {
          200: listResponse(
            'A batch of risks and the cursor of the next one.',
            ListRisksResponse,
            listRisksExample,
            'Risk',
          ),
          ...errorResponses({
            badRequest: {
              errors: [
                {
                  code: 'invalid_parameter',
                  field: 'severityLevels',
                  message:
                    "severityLevels has invalid item(s) 'SEVERE': each item must be one of CRITICAL, HIGH, MEDIUM, LOW",
                },
                {
                  code: 'invalid_cursor',
                  field: 'cursor',
                  message:
                    'cursor is not valid for this query: pass meta.cursor unchanged, with the same key, filters, sort, fields and include',
                },
              ],
            },
            cursor: true,
            exports: true,
          }),
        },
      },
    },
    async (request, reply) => {
      const query = request.query;
      if (query.format !== undefined && query.format !== 'json') {
        const { fields, include } = query;
        return sendSnapshotExport(request, reply, { storage, cursors }, query.format, {
          name: 'risks',
          // The risk's fields (those of `fields` when given), then the embeds asked for, as the paged items hold them.
          columns: [
            ...riskFieldNames.filter((name) => fields?.includes(name) ?? true),
            ...riskIncludes.filter((name) => include?.includes(name)),
          ],
          batches: (snapshot) =>
            batchesOf<RiskPosition>((after, size) => snapshot.listRisks({ ...query, perPage: size }, after)),
        });
      }
      const binding = cursorBinding(RISKS_PATH, request.tenant.tenantId, query);
      const after = query.cursor === undefined ? undefined : cursors.decode(query.cursor, binding, 1);
      const { items, total, next, position } = await storage.listRisks(request.tenant, query, after);
      const cursor = next === null ? null : cursors.encode(next, binding);
      tellPosition(reply, cursors, request.tenant.tenantId, position);
      return sendJson(reply, listBody(items, { perPage: query.perPage, total, cursor }));
    },
  );
}
