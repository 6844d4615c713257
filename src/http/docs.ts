// Pieces of the route schemas that only document the API (the OpenAPI document, src/modules/openapi/routes.ts):
// references to the shared component schemas, the error responses of every operation, response examples and query
// parameter examples. None of it validates or serialises anything: queries are parsed by defineQuery()
// (src/http/query.ts) and handlers send pre-built Buffers, error bodies pre-built strings.
import { Type, type TSchema } from 'typebox';
import { errorStatus, type ErrorCode } from '../domain/errors.js';
import { StringEnum } from '../domain/schema.js';
import type { ParamSpec } from '../domain/query.js';
import type { QueryDefinition } from './query.js';

const errorCodes = Object.keys(errorStatus) as ErrorCode[];

/** The one error body of every error response. Registered as the component schema `Error`. */
/** The tenant and organization of the examples in the document. */
export const EXAMPLE_TENANT = '810a0c5d-53f7-4e56-a0f7-8684cd06a7ac';
export const EXAMPLE_ORGANIZATION = 'fbf18ba2-f01c-43b9-b220-d8d587f4d3e2';

export const ErrorBody = Type.Object(
  {
    errors: Type.Array(
      Type.Object({
        code: StringEnum(
          errorCodes,
          `Machine-readable error code; its HTTP status: ${errorCodes.map((c) => `${c} ${errorStatus[c]}`).join(', ')}.`,
        ),
        field: Type.Optional(
          Type.String({ description: 'The query parameter the problem is about, when there is one.' }),
        ),
        message: Type.String({
          description: 'Human-readable explanation. Never carries a stack trace, SQL or other internal detail.',
        }),
      }),
      { minItems: 1, description: 'Every problem found in the request (a 400 lists all of them, not just the first).' },
    ),
  },
  {
    description:
      'The body of every error response: one or more problems, each with a code, optionally the parameter it is about, and a message.',
    examples: [
      {
        errors: [{ code: 'invalid_parameter', field: 'perPage', message: 'perPage must be an integer from 1 to 100' }],
      },
    ],
  },
);

/** The names of `components.schemas`; registerOpenApi() registers one schema under each. */
export type ComponentName =
  | 'Error'
  | 'Asset'
  | 'Integration'
  | 'Risk'
  | 'Vulnerability'
  | 'PageMeta'
  | 'CursorMeta'
  | 'FindingPageMeta'
  | 'FindingBatchMeta';

/** A reference to a component schema (resolved by @fastify/swagger to `#/components/schemas/<name>`). */
export const ref = (name: ComponentName): TSchema => Type.Ref(name);

const header = (description: string, schema: object = { type: 'string' }) => ({ description, ...schema });

const REQUEST_ID = header(
  "The request id: the request's own `X-Request-Id` when it is 1 to 128 characters of `[A-Za-z0-9._-]`, else a new one. Quote it when reporting a problem.",
);
const RETRY_AFTER = header('Seconds to wait before retrying.', { type: 'integer', minimum: 0 });

/** A JSON response of the document: description, schema, one example body and the response headers. */
export const jsonResponse = (
  description: string,
  schema: TSchema,
  example: unknown,
  headers: Record<string, object> = {},
) => ({
  description,
  headers: { 'X-Request-Id': REQUEST_ID, ...headers },
  content: { 'application/json': { schema, example } },
});

/**
 * A list's 200 with its export media types beside JSON: the same operation streams every matching record as NDJSON or
 * CSV when asked with `format` or Accept (src/http/export.ts).
 */
/** The change-log position a list answer or an export was read at (src/http/snapshot.ts). */
export const CHANGES_CURSOR_HEADER = header(
  'The position of the change log at the snapshot this answer was read from, as a cursor: `GET /v1/tenant/changes?cursor=…` ' +
    '(with any filters) returns exactly the changes committed after it. Export a list, then follow the changes from its ' +
    'header: nothing is missed and nothing is seen twice. An export reads all its records in that one snapshot.',
);

export const listResponse = (description: string, schema: TSchema, example: unknown, item: string) => {
  const json = jsonResponse(description, schema, example);
  return {
    ...json,
    description:
      `${description} With \`format=ndjson\` or \`format=csv\` (or \`Accept: application/x-ndjson\` / \`text/csv\`): ` +
      'every matching record, all pages, as one streamed download.',
    headers: {
      ...json.headers,
      'Content-Disposition': header(
        'Exports only: `attachment; filename="<list>-<yyyy-MM-dd>.<ndjson|csv>"` (the date of the request, UTC).',
      ),
      ETag: header(
        'A weak tag of this representation (the data version, the query and the format); `If-None-Match` with it is `304` until the data changes.',
      ),
      'Secinv-Changes-Cursor': CHANGES_CURSOR_HEADER,
    },
    content: {
      ...json.content,
      'application/x-ndjson': {
        schema: {
          type: 'string',
          description: `One ${item} per line (the items of \`data\`, with the same \`fields\` and \`include\`), in the order of the list, each line ending with \`\\n\`.`,
        },
      },
      'text/csv': {
        schema: {
          type: 'string',
          description:
            'RFC 4180 CSV in UTF-8 with a byte order mark: a header row, then one row per record, `\\r\\n` after each. One ' +
            'column per top-level field in the order of the contract (with `fields`, those fields; then the `include` ' +
            'embeds). Objects and arrays are compact JSON, `null` an empty cell, booleans `true` / `false`. A text cell ' +
            "that starts with `=`, `+`, `-`, `@`, tab or CR is prefixed with `'` so that spreadsheets do not run it.",
        },
      },
    },
  };
};

type ErrorStatus = 400 | 401 | 403 | 404 | 405 | 406 | 409 | 410 | 413 | 415 | 429 | 500 | 503;

const problem = (code: ErrorCode, message: string) => ({ errors: [{ code, message }] });

export const GONE_MESSAGE =
  'this cursor is older than the change log keeps: read the inventory again (an export gives a new Secinv-Changes-Cursor) and follow from there';

const errorDocs: Record<ErrorStatus, (options: ErrorOptions) => ReturnType<typeof jsonResponse>> = {
  400: ({ badRequest, cursor, exports }) =>
    jsonResponse(
      'Invalid request: an unknown query parameter, an empty value, a scalar parameter given more than once, a value of the ' +
        'wrong type, format or range, a list with too many items, or a range whose start is after its end' +
        `${cursor ? ', or a cursor not issued for this query' : ''}. Every problem of the request is listed, each naming its ` +
        `parameter in \`field\`. Codes: \`invalid_parameter\`, \`unknown_parameter\`${cursor ? ', `invalid_cursor`' : ''}.` +
        `${exports ? ' An export (`format` ndjson or csv, or by Accept) with a parameter of the list that shapes a page (`page`, `perPage`, `cursor`, `includeTotal`; except the change log `cursor`, where its export starts) is `400` too.' : ''}`,
      ref('Error'),
      badRequest,
    ),
  401: () =>
    jsonResponse(
      'The `Authorization` header is missing or is not `Bearer <key>`, or the key is unknown, revoked or expired (one ' +
        'answer for all of these). Checked before the query parameters. Code: `unauthorized`.',
      ref('Error'),
      problem('unauthorized', 'a valid API key is required: Authorization: Bearer <key>'),
      { 'WWW-Authenticate': header('Always `Bearer`.', { type: 'string', enum: ['Bearer'] }) },
    ),
  403: ({ scopes = ['read'] }) =>
    jsonResponse(
      `A valid key that lacks ${scopes.length > 1 ? 'each of the scopes' : 'the scope'} ` +
        `${scopes.map((scope) => `\`${scope}\``).join(' and ')} of which the operation needs one (keys are made with ` +
        '`secinv keys create --scope`). Checked after the key, before the query parameters. Code: `forbidden`.',
      ref('Error'),
      problem(
        'forbidden',
        `this key lacks the ${scopes.map((scope) => `'${scope}'`).join(' or ')} scope this operation needs (secinv keys create --scope)`,
      ),
    ),
  409: () =>
    jsonResponse(
      'The `Idempotency-Key` was used within 24 h for another upload (another body or other options). Code: `conflict`.',
      ref('Error'),
      problem(
        'conflict',
        'this Idempotency-Key was used within 24 h for another upload (another body or other options)',
      ),
    ),
  410: () =>
    jsonResponse(
      'The cursor is older than what the log keeps (`SECINV_CHANGES_RETENTION_DAYS`): changes after it were pruned. ' +
        'Read the inventory again (an export gives a new cursor in `Secinv-Changes-Cursor`) and follow from there. ' +
        'Code: `gone`.',
      ref('Error'),
      problem('gone', GONE_MESSAGE),
    ),
  413: () =>
    jsonResponse(
      'The body is larger than the server accepts (`SECINV_SCAN_MAX_BYTES`, after decoding): by its `Content-Length` ' +
        'before it is read, or while it is read. Nothing is stored. Code: `payload_too_large`.',
      ref('Error'),
      problem('payload_too_large', 'the report is larger than 1073741824 bytes (SECINV_SCAN_MAX_BYTES)'),
    ),
  415: () =>
    jsonResponse(
      'A `Content-Type` other than `application/json`, `application/gzip` or `application/octet-stream`, or a ' +
        '`Content-Encoding` other than gzip, deflate or br. Code: `unsupported_media_type`.',
      ref('Error'),
      problem(
        'unsupported_media_type',
        "Content-Type must be one of application/json, application/gzip, application/octet-stream, not 'text/plain': send the report's bytes as they are",
      ),
    ),
  404: ({ notFound }) =>
    jsonResponse(
      typeof notFound === 'string'
        ? notFound
        : 'No asset with this id in the tenant of the key (an asset of another tenant is indistinguishable from a missing ' +
            'one), or an empty id. Code: `not_found`.',
      ref('Error'),
      problem('not_found', 'no asset with this id'),
    ),
  405: ({ allow = 'GET, HEAD' }) =>
    jsonResponse(
      `A method other than ${allow} on this path (answered before authentication). Code: \`method_not_allowed\`.`,
      ref('Error'),
      problem('method_not_allowed', `only ${allow} are allowed here`),
      { Allow: header(`The allowed methods: \`${allow}\`.`) },
    ),
  406: () =>
    jsonResponse(
      'The `Accept` header admits none of the media types of the list (`application/json`, `application/x-ndjson`, ' +
        '`text/csv`) and no `format` parameter was given. Code: `not_acceptable`.',
      ref('Error'),
      problem(
        'not_acceptable',
        'Accept names no media type of this list; it answers application/json, application/x-ndjson, text/csv (or use the format parameter: json, ndjson, csv)',
      ),
    ),
  429: () =>
    jsonResponse(
      'Too many requests with this key: the rate limit is exceeded (invalid requests count too). Retry after the number ' +
        'of seconds in `Retry-After`. Code: `rate_limited`.',
      ref('Error'),
      problem('rate_limited', 'more than 1200 requests per minute for this key; retry in 30 seconds'),
      {
        'Retry-After': RETRY_AFTER,
        'RateLimit-Limit': header('Requests allowed per window.', { type: 'integer', minimum: 0 }),
        'RateLimit-Remaining': header('Requests left in the current window.', { type: 'integer', minimum: 0 }),
        'RateLimit-Reset': header('Seconds until the window resets.', { type: 'integer', minimum: 0 }),
      },
    ),
  500: () =>
    jsonResponse(
      'Unexpected failure. The body carries no internal detail, only the request id (also in `X-Request-Id`). Code: `internal`.',
      ref('Error'),
      problem('internal', 'internal error (request id 0b5f3c0e-8a1e-4a57-9a39-2f0e4c1d6b7a)'),
    ),
  503: () =>
    jsonResponse(
      'The database is unreachable or overloaded, or a query ran too long; retry after `Retry-After` seconds. Code: `unavailable`.',
      ref('Error'),
      problem('unavailable', 'the database is unavailable or overloaded; retry shortly'),
      { 'Retry-After': RETRY_AFTER },
    ),
};

type Problems = { errors: { code: ErrorCode; field?: string; message: string }[] };

interface ErrorOptions {
  /** The example body of the 400 response. */
  badRequest: Problems;
  /** The operation takes a cursor (400 `invalid_cursor`). */
  cursor?: boolean;
  /** The operation names one record (404 when it does not exist); a string describes its 404 instead of the default. */
  notFound?: boolean | string;
  /** The operation also answers exports (406 for an Accept header it cannot satisfy). */
  exports?: boolean;
  /** The scopes of which a key needs one (403 without), as the route's `config.scopes`; default `read`. */
  scopes?: readonly string[];
  /** The methods the path allows (405 for the others); default `GET, HEAD`. */
  allow?: string;
  /** The operation takes an uploaded body (409 for a reused Idempotency-Key, 413, 415). */
  upload?: boolean;
  /** The operation reads the change log from a cursor, which retention may have passed (410). */
  gone?: boolean;
}

/**
 * The error responses of an operation: 400, 401, 403, 404 (with `notFound`), 405, 406 (with `exports`), 409, 413 and
 * 415 (with `upload`), 410 (with `gone`), 429, 500, 503.
 */
export function errorResponses(options: ErrorOptions) {
  const statuses: ErrorStatus[] = [
    400,
    401,
    403,
    ...(options.notFound ? [404 as const] : []),
    405,
    ...(options.exports ? [406 as const] : []),
    ...(options.upload ? [409 as const, 413 as const, 415 as const] : []),
    ...(options.gone ? [410 as const] : []),
    429,
    500,
    503,
  ];
  return Object.fromEntries(statuses.map((status) => [status, errorDocs[status](options)]));
}

const parameterExamples = new WeakMap<object, Record<string, string>>();

/**
 * Example values of some query parameters of an operation, shown in the document (parameter `example`). Kept beside
 * the query definition, keyed by its schema: the route keeps passing that very schema object, which its parser is
 * found by.
 */
export function queryExamples<S extends Record<string, ParamSpec>>(
  query: QueryDefinition<S>,
  examples: { [K in keyof S]?: string },
): void {
  parameterExamples.set(query.schema, examples as Record<string, string>);
}

/** The query parameter examples registered for a querystring schema, if any. */
export const examplesOf = (querystring: unknown): Record<string, string> | undefined =>
  typeof querystring === 'object' && querystring !== null ? parameterExamples.get(querystring) : undefined;
