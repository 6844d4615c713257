// Scans over HTTP (pipeline.md §2): `POST /v1/tenant/scans` stores a report's bytes and queues it, `GET` reads one
// scan or the tenant's list. A key with `ingest` but not `read` sees only the scans it uploaded. Scan answers are
// not kept (a scan's status moves without its tenant's data version): each is tagged by its own bytes.
import { createHash, randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { apiError } from '../../domain/errors.js';
import { namesTag } from '../../http/caching.js';
import { cursorBinding, type CursorCodec } from '../../http/cursor.js';
import { errorResponses, jsonResponse } from '../../http/docs.js';
import { JSON_TYPE } from '../../http/respond.js';
import type { Storage } from '../../storage/index.js';
import { checkUploadHeaders, receive } from './receive.js';
import {
  getScanQuery,
  ListScansResponse,
  listScansQuery,
  ScanResponse,
  scanExample,
  uploadScanQuery,
  type ListScansQuery,
  type UploadScanQuery,
} from './schemas.js';

export const SCANS_PATH = '/v1/tenant/scans';
export const SCAN_PATH = '/v1/tenant/scans/:id';

export interface ScanRouteOptions {
  storage: Storage;
  cursors: CursorCodec;
  /** Largest body accepted, in bytes after decoding (SECINV_SCAN_MAX_BYTES). */
  maxBytes: number;
  /** Tells this process's scan runner that a scan was queued. */
  queued?: () => void;
  now: () => Date;
}

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/** The key id a scan read is narrowed to: a key that may not read everything sees only its own uploads. */
const ownOnly = (request: FastifyRequest): string | undefined =>
  request.apiKeyScopes.includes('read') ? undefined : request.apiKeyId;

/** A scan answer tagged by its bytes; 304 when the client holds them. */
function sendTagged(request: FastifyRequest, reply: FastifyReply, status: number, value: unknown): FastifyReply {
  const body = Buffer.from(JSON.stringify(value));
  const etag = `W/"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
  reply.header('ETag', etag);
  if (request.method !== 'POST' && namesTag(request.headers['if-none-match'], etag)) return reply.code(304).send();
  return reply.code(status).type(JSON_TYPE).send(body);
}

/** The options of an upload as the scan records them: what was given, defaults filled in. */
const optionsOf = (query: UploadScanQuery): Record<string, unknown> =>
  Object.fromEntries(Object.entries(query).filter(([, value]) => value !== undefined));

export async function scanRoutes(api: FastifyInstance, options: ScanRouteOptions): Promise<void> {
  const { storage, cursors, maxBytes, now } = options;
  // The body is the report as bytes: handed on as a stream, never parsed or buffered here.
  api.removeAllContentTypeParsers();
  api.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
  api.addHook('onRequest', async (request) => {
    request.uncached = true;
  });

  api.post<{ Querystring: UploadScanQuery }>(
    SCANS_PATH,
    {
      bodyLimit: Number.MAX_SAFE_INTEGER,
      config: { scopes: ['ingest'] },
      // The runner is woken once the 202 is out: a process that dies from then on has answered for a scan that stays
      // queued for whichever process claims it (the `queued` point of SECINV_TEST_SCAN_KILL_AT).
      onResponse: async (_request, reply) => {
        if (reply.statusCode === 202) options.queued?.();
      },
      schema: {
        operationId: 'uploadScan',
        summary: 'Upload a scan',
        description:
          'Uploads one report, in any format `secinv ingest` reads, to be ingested into the tenant of the key in the ' +
          "background. The body is the report's bytes (`application/json`, `application/gzip` or " +
          '`application/octet-stream`; `Content-Encoding: gzip` is decoded). Answered `202` once the bytes are stored, ' +
          'with `Location`; poll the scan until it `succeeded` or `failed`. An `Idempotency-Key` header makes a retry ' +
          'safe: the same key with the same body and options within 24 h answers `200` with the scan it created, with ' +
          'another body or options `409`. Needs the `ingest` scope.',
        tags: ['Scans'],
        querystring: uploadScanQuery.schema,
        response: {
          202: jsonResponse('Stored and queued.', ScanResponse, { data: scanExample }),
          200: jsonResponse('The scan an earlier upload with this Idempotency-Key created.', ScanResponse, {
            data: scanExample,
          }),
          ...errorResponses({
            badRequest: {
              errors: [{ code: 'unknown_parameter', field: 'fromat', message: "unknown query parameter 'fromat'" }],
            },
            scopes: ['ingest'],
            allow: 'GET, HEAD, POST',
            upload: true,
          }),
        },
      },
    },
    async (request, reply) => {
      const idempotencyKey = request.headers['idempotency-key'];
      if (idempotencyKey !== undefined && (Array.isArray(idempotencyKey) || !IDEMPOTENCY_KEY.test(idempotencyKey)))
        throw apiError(
          'invalid_parameter',
          'Idempotency-Key must be 1 to 255 visible ASCII characters',
          'Idempotency-Key',
        );
      const query = request.query;
      if (query.name !== undefined && query.name.length > 255)
        throw apiError('invalid_parameter', 'name must be at most 255 characters', 'name');
      checkUploadHeaders(request, maxBytes);
      const recorded = optionsOf(query);
      const body = receive(request, maxBytes);
      let answer;
      try {
        answer = await storage.acceptScan(
          {
            id: randomUUID(),
            tenantId: request.tenant.tenantId,
            name: query.name ?? null,
            options: recorded,
            keyId: request.apiKeyId,
            idempotencyKey: idempotencyKey ?? null,
            submittedAt: now().toISOString(),
          },
          body.bytes,
          () => {
            const measured = body.measured();
            const requestHash = createHash('sha256')
              .update(JSON.stringify([measured.sha256, recorded]))
              .digest('hex');
            return { ...measured, requestHash };
          },
        );
      } catch (error) {
        // The rest of a refused body is not read: the connection closes after the answer.
        reply.header('Connection', 'close');
        throw error;
      }
      if (answer.kind === 'conflict')
        throw apiError(
          'conflict',
          'this Idempotency-Key was used within 24 h for another upload (another body or other options)',
          'Idempotency-Key',
        );
      reply.header('Location', `${SCANS_PATH}/${answer.scan.id}`);
      return sendTagged(request, reply, answer.kind === 'created' ? 202 : 200, { data: answer.scan });
    },
  );

  api.get<{ Params: { id: string } }>(
    SCAN_PATH,
    {
      config: { scopes: ['read', 'ingest'] },
      schema: {
        operationId: 'getScan',
        summary: 'Get a scan',
        description:
          'One scan of the tenant of the key: its status and, once it ended, its summary and gate or its problems. ' +
          'A key with `ingest` but not `read` reads only the scans it uploaded.',
        tags: ['Scans'],
        querystring: getScanQuery.schema,
        response: {
          200: jsonResponse('The scan.', ScanResponse, { data: scanExample }),
          ...errorResponses({
            badRequest: {
              errors: [{ code: 'unknown_parameter', field: 'perPage', message: "unknown query parameter 'perPage'" }],
            },
            notFound:
              'No scan with this id in the tenant of the key (for a key without `read`: none it uploaded). Code: `not_found`.',
            scopes: ['read', 'ingest'],
          }),
        },
      },
    },
    async (request, reply) => {
      const scan = await storage.getScan(request.tenant, request.params.id, ownOnly(request));
      if (scan === undefined) throw apiError('not_found', `no scan with id '${request.params.id}'`);
      return sendTagged(request, reply, 200, { data: scan });
    },
  );

  api.get<{ Querystring: ListScansQuery }>(
    SCANS_PATH,
    {
      config: { scopes: ['read', 'ingest'] },
      schema: {
        operationId: 'listScans',
        summary: 'List scans',
        description:
          'The scans of the tenant of the key, newest first, in cursor-paginated batches: pass `meta.cursor` back as ' +
          '`cursor` with the same filters until it is `null`. A key with `ingest` but not `read` lists only the scans ' +
          'it uploaded.',
        tags: ['Scans'],
        querystring: listScansQuery.schema,
        response: {
          200: jsonResponse('A batch of scans and the cursor of the next one.', ListScansResponse, {
            data: [scanExample],
            meta: { perPage: 25, cursor: null },
          }),
          ...errorResponses({
            badRequest: {
              errors: [
                {
                  code: 'invalid_parameter',
                  field: 'statuses',
                  message:
                    "statuses has invalid item(s) 'done': each item must be one of queued, running, succeeded, failed",
                },
              ],
            },
            cursor: true,
            scopes: ['read', 'ingest'],
            allow: 'GET, HEAD, POST',
          }),
        },
      },
    },
    async (request, reply) => {
      const query = request.query;
      const keyId = ownOnly(request);
      const binding = cursorBinding(SCANS_PATH, request.tenant.tenantId, { ...query, keyId });
      const after = query.cursor === undefined ? undefined : cursors.decode(query.cursor, binding, 1);
      const { items, next } = await storage.listScans(
        request.tenant,
        query,
        after && { submittedAt: String(after[0]), id: after[1] },
        keyId,
      );
      const cursor = next === null ? null : cursors.encode([next.submittedAt, next.id], binding);
      return sendTagged(request, reply, 200, { data: items, meta: { perPage: query.perPage, cursor } });
    },
  );
}
