// The change log over HTTP (pipeline.md §4): `GET /v1/tenant/changes` reads the tenant's log in order from a cursor
// that is never null, and `GET /v1/tenant/scans/{id}/changes` one scan's diff. A cursor is the position after the last
// change sent, sealed with what it was issued for: the filters, or any filters for the snapshot position a list
// answer carries in `Secinv-Changes-Cursor`.
import type { FastifyInstance, FastifyReply } from 'fastify';
import { apiError } from '../../domain/errors.js';
import type { CursorCodec } from '../../http/cursor.js';
import { cursorBinding } from '../../http/cursor.js';
import { errorResponses, GONE_MESSAGE, jsonResponse, listResponse } from '../../http/docs.js';
import { batchesOf, negotiateFormat } from '../../http/export.js';
import { listBody, sendJson } from '../../http/respond.js';
import { CHANGES_PATH, POSITION_KEY, sendSnapshotExport, snapshotBinding, tellPosition } from '../../http/snapshot.js';
import type { ChangePage, Storage } from '../../storage/index.js';
import {
  Change,
  changeExample,
  ListChangesResponse,
  listChangesQuery,
  scanChangesQuery,
  type ListChangesQuery,
  type ScanChangesQuery,
} from './schemas.js';

export { CHANGES_PATH };
export const SCAN_CHANGES_PATH = '/v1/tenant/scans/:id/changes';

const INVALID_CURSOR_EXAMPLE = {
  code: 'invalid_cursor',
  field: 'cursor',
  message:
    'cursor is not valid for this query: pass meta.cursor unchanged, with the same key, filters, sort, fields and include',
} as const;

export async function changeRoutes(
  app: FastifyInstance,
  { storage, cursors }: { storage: Storage; cursors: CursorCodec },
): Promise<void> {
  /** The position a cursor holds, issued for this binding or (when `snapshots`) as a list answer's snapshot. */
  const positionOf = (cursor: string | undefined, binding: string, tenantId: string, snapshots: boolean) => {
    if (cursor === undefined) return undefined;
    try {
      return Number(cursors.decode(cursor, binding, 1)[0]);
    } catch (error) {
      if (!snapshots) throw error;
      return Number(cursors.decode(cursor, snapshotBinding(tenantId), 1)[0]);
    }
  };
  const send = (reply: FastifyReply, page: ChangePage, perPage: number, binding: string) => {
    if (page.gone) throw apiError('gone', GONE_MESSAGE, 'cursor');
    const cursor = cursors.encode([page.position, POSITION_KEY], binding);
    // As on every list answer, the position of the snapshot it was read from (here the log's head then).
    tellPosition(reply, cursors, reply.request.tenant.tenantId, page.head);
    return sendJson(reply, listBody(page.items, { perPage, cursor }));
  };

  app.get<{ Querystring: ListChangesQuery }>(
    CHANGES_PATH,
    {
      preValidation: negotiateFormat,
      schema: {
        operationId: 'listChanges',
        summary: 'List changes',
        description:
          "The tenant's change log in order: one change per record a write created, changed or removed (a scan, an " +
          'import, a feed load, a risk command), each with its cause and the record as served. Store `meta.cursor` ' +
          '(never null) and ask again with it, with the same filters: an empty `data` means caught up. To hold a copy ' +
          'of the inventory, export a list once and follow the changes from its `Secinv-Changes-Cursor` header: ' +
          'nothing is missed and nothing is seen twice. A cursor older than the retention is `410 gone`.\n\n' +
          'A record observed again with none of its tracked fields changed is not a change (its `lastObservedAt` ' +
          'moves; `updatedSince` on the lists finds it).\n\n' +
          '**Export.** `format=ndjson` or `format=csv` (or the Accept header, as on every list) streams every change ' +
          'after `cursor` (or from the start of the log), under the filters, up to the head of the log when the export ' +
          'began, read in one snapshot; its `Secinv-Changes-Cursor` header is that head, to follow on from. `perPage` ' +
          'is `400` with an export.',
        tags: ['Changes'],
        querystring: listChangesQuery.schema,
        response: {
          200: listResponse(
            'A batch of changes and the cursor to read on from.',
            ListChangesResponse,
            {
              data: [changeExample],
              meta: { perPage: 100, cursor: 'WzEsMTA0MiwiY2hhbmdlcyJd.8lH4Jm1oXoQeD6w0bQ4Vtg' },
            },
            'change',
          ),
          ...errorResponses({
            badRequest: { errors: [INVALID_CURSOR_EXAMPLE] },
            cursor: true,
            gone: true,
            exports: true,
          }),
        },
      },
    },
    async (request, reply) => {
      const { cursor, perPage, format, ...filters } = request.query;
      const tenantId = request.tenant.tenantId;
      const binding = cursorBinding(CHANGES_PATH, tenantId, request.query);
      const after = positionOf(cursor, binding, tenantId, true);
      if (format !== undefined && format !== 'json')
        return sendSnapshotExport(request, reply, { storage, cursors }, format, {
          name: 'changes',
          columns: Object.keys(Change.properties),
          batches: (snapshot) =>
            batchesOf<number>(async (from, size) => {
              const page = await snapshot.listChanges({ ...filters, perPage: size }, from ?? after);
              if (page.gone) throw apiError('gone', GONE_MESSAGE, 'cursor');
              // A short batch reached the head of the log as the snapshot holds it.
              return { items: page.items, next: page.items.length < size ? null : page.position };
            }),
        });
      return send(reply, await storage.listChanges(request.tenant, { ...filters, perPage }, after), perPage, binding);
    },
  );

  app.get<{ Params: { id: string }; Querystring: ScanChangesQuery }>(
    SCAN_CHANGES_PATH,
    {
      schema: {
        operationId: 'listScanChanges',
        summary: "List a scan's changes",
        description:
          'The changes one scan caused (its diff), in log order, read on with `meta.cursor` as the change list. ' +
          'A scan that changed nothing has none.',
        tags: ['Changes'],
        querystring: scanChangesQuery.schema,
        response: {
          200: jsonResponse("A batch of the scan's changes and the cursor to read on from.", ListChangesResponse, {
            data: [
              {
                ...changeExample,
                type: 'finding.opened',
                fields: [],
                cause: { kind: 'scan', scanId: '5f0c6f57-6d1b-4b8f-9d55-3f7d0b0e7a11' },
              },
            ],
            meta: { perPage: 100, cursor: 'WzEsMTA0MiwiY2hhbmdlcyJd.8lH4Jm1oXoQeD6w0bQ4Vtg' },
          }),
          ...errorResponses({
            badRequest: { errors: [INVALID_CURSOR_EXAMPLE] },
            cursor: true,
            notFound: 'No scan with this id in the tenant of the key. Code: `not_found`.',
            gone: true,
          }),
        },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      if ((await storage.getScan(request.tenant, id, undefined)) === undefined)
        throw apiError('not_found', `no scan with id '${id}'`);
      const { cursor, perPage } = request.query;
      const binding = cursorBinding(`${CHANGES_PATH}/scans`, request.tenant.tenantId, { scanId: id });
      const after = positionOf(cursor, binding, request.tenant.tenantId, false);
      return send(reply, await storage.listChanges(request.tenant, { scanId: id, perPage }, after), perPage, binding);
    },
  );
}
