import type { FastifyInstance } from 'fastify';
import { cursorBinding, type CursorCodec } from '../../http/cursor.js';
import { errorResponses, listResponse } from '../../http/docs.js';
import { batchesOf, EXPORT_DOC, negotiateFormat } from '../../http/export.js';
import { sendSnapshotExport, tellPosition } from '../../http/snapshot.js';
import { listBody, pageMeta, sendJson } from '../../http/respond.js';
import { Vulnerability } from '../../domain/vulnerabilities.js';
import type { FindingPosition, Storage } from '../../storage/index.js';
import {
  ListVulnerabilitiesResponse,
  listVulnerabilitiesExample,
  listVulnerabilitiesQuery,
  type ListVulnerabilitiesQuery,
} from './schemas.js';

export const VULNERABILITIES_PATH = '/v1/tenant/vulnerabilities';

export async function vulnerabilityRoutes(
  app: FastifyInstance,
  { storage, cursors }: { storage: Storage; cursors: CursorCodec },
): Promise<void> {
  app.get<{ Querystring: ListVulnerabilitiesQuery }>(
    VULNERABILITIES_PATH,
    {
      preValidation: negotiateFormat,
      schema: {
        operationId: 'listVulnerabilities',
        summary: 'List vulnerability findings',
        description:
          'The vulnerability findings (one vulnerability on one asset) of the tenant of the key, filtered, sorted and ' +
          'in numbered pages or cursor-paginated batches.\n\n' +
          'Default order: `severityLevelValue` descending (CRITICAL 5 … UNKNOWN 0); ties break by (`assetId`, ' +
          "`vulnerabilityId`) in the sort's direction. Package filters (`packageName`, `targetName`, `targetType`, " +
          '`targetClass`) must all hold for one same package of the finding. By default only the findings no exemption ' +
          'matches are listed; `isExempted=true` lists the exempted ones instead. Each finding carries the exemptions that ' +
          'match it.\n\n' +
          'Every response carries `meta.cursor`: pass it back as `cursor`, with the same filters, `sortBy` and `sortOrder` ' +
          '(`perPage` may change), for the findings after it, until it is `null`. Cursors are keyset positions: a walk ' +
          'neither skips nor repeats a finding because others were added or removed before it, and a batch deep in the ' +
          'list costs what the first does. A cursor used with other filters, another sort or another key, or altered, ' +
          'is `400 invalid_cursor`; `page` and `cursor` together are `400`. With `cursor`, or with `includeTotal=false`, ' +
          '`meta` is `{perPage, cursor}` and no count is made; otherwise `meta` is the numbered page (`page`, `total`, ' +
          '`hasNextPage`, `hasPreviousPage`) plus `cursor`.\n\n' +
          EXPORT_DOC +
          'Request rules: as on every operation (see List assets); `400` lists every problem.',
        tags: ['Vulnerabilities'],
        querystring: listVulnerabilitiesQuery.schema,
        response: {
          200: listResponse(
            'A page of findings and its position.',
            ListVulnerabilitiesResponse,
            listVulnerabilitiesExample,
            'Vulnerability',
          ),
          ...errorResponses({
            badRequest: {
              errors: [
                { code: 'invalid_parameter', field: 'assetIds', message: 'assetIds must list at most 10 items' },
                {
                  code: 'invalid_parameter',
                  field: 'page',
                  message: 'page and cursor exclude each other: a cursor continues from its own position',
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
        return sendSnapshotExport(request, reply, { storage, cursors }, query.format, {
          name: 'vulnerabilities',
          columns: Object.keys(Vulnerability.properties),
          batches: (snapshot) =>
            batchesOf<FindingPosition>((after, size) =>
              snapshot.listVulnerabilities({ ...query, perPage: size, includeTotal: false }, after),
            ),
        });
      }
      const binding = cursorBinding(VULNERABILITIES_PATH, request.tenant.tenantId, query);
      const after = query.cursor === undefined ? undefined : cursors.decode(query.cursor, binding, 2);
      const { items, total, next, position } = await storage.listVulnerabilities(request.tenant, query, after);
      const cursor = next === null ? null : cursors.encode(next, binding);
      tellPosition(reply, cursors, request.tenant.tenantId, position);
      const meta =
        total === undefined
          ? { perPage: query.perPage, cursor }
          : { ...pageMeta(query.page, query.perPage, total), cursor };
      return sendJson(reply, listBody(items, meta));
    },
  );
}
