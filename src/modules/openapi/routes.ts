// The OpenAPI 3.1 document (/openapi.json) and the interactive reference (/docs), generated from the route schemas:
// the query schemas that defineQuery() builds (and whose parsers validate the requests), the resource schemas, and
// the documentation-only parts of src/http/docs.ts. The committed openapi.json is this document (scripts/write-openapi.ts).
import swagger, { type SwaggerTransform } from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import type { TSchema } from 'typebox';
import { Asset } from '../../domain/assets.js';
import { AssetIdParams, PageMeta } from '../assets/schemas.js';
import { ASSET_PATH, ASSETS_PATH } from '../assets/routes.js';
import { Integration, Risk } from '../../domain/risks.js';
import { CursorMeta } from '../risks/schemas.js';
import { Vulnerability } from '../../domain/vulnerabilities.js';
import { FindingBatchMeta, FindingPageMeta } from '../vulnerabilities/schemas.js';
import { ErrorBody, examplesOf, type ComponentName } from '../../http/docs.js';
import { packageVersion } from '../../http/version.js';

/** `components.schemas`: each registered with `app.addSchema()` under its name, referenced with `ref(name)`. */
const components: Record<ComponentName, TSchema> = {
  Error: ErrorBody,
  Asset: withDescription(
    Asset,
    'A cloud or cluster asset. Every property is present; a scalar or object without a value is `null`, an array without one `[]`, a boolean without one `false`.',
  ),
  Integration: withDescription(
    Integration,
    'The integration (provider account, subscription, project or cluster connection) that produced a record.',
  ),
  Risk: withDescription(
    Risk,
    'A risk derived from the assets. Every property is present; a scalar or object without a value is `null`, an array without one `[]`.',
  ),
  Vulnerability: withDescription(
    Vulnerability,
    'One vulnerability finding on one asset. Every property is present; a scalar or object without a value is `null`, an array without one `[]`, a boolean without one `false`.',
  ),
  PageMeta,
  CursorMeta,
  FindingPageMeta,
  FindingBatchMeta,
};

function withDescription(schema: TSchema, description: string): TSchema {
  return { ...schema, description };
}

const info = {
  title: 'Tenant Security Inventory API',
  version: packageVersion(),
  summary:
    'Read-only API over a per-tenant inventory of cloud assets, their vulnerability findings and the risks derived from them.',
  description: [
    'Four read-only operations over the security inventory of one tenant: cloud and cluster assets, the vulnerability ' +
      'findings on them, and the risks derived from them. Every operation is `GET` (and `HEAD`, which answers the same ' +
      'without a body) and answers JSON (`application/json; charset=utf-8`).',
    '**Authentication.** Every operation needs `Authorization: Bearer <key>` with a tenant API key (`secinv keys create ' +
      '--tenant <tenantId>`). A key sees the records of its own tenant only.',
    '**Lists.** A list answers `{ "data": [...], "meta": {...} }`; assets come in numbered pages (`page`, `perPage`), ' +
      'risks in cursor-paginated batches (`cursor`), vulnerabilities in either. The get operation answers `{ "data": {...} }`. ' +
      'Every field of a resource is present in every object: a scalar or object without a value is `null`, an array ' +
      'without one `[]`. Timestamps are `yyyy-MM-ddTHH:mm:ss.SSSZ` in UTC.',
    '**Query parameters.** List parameters are comma-separated and may be repeated (their items are united); items are ' +
      'trimmed and empty items ignored. Enum values match in any case. Booleans are `true` or `false`. Date-times are ' +
      'RFC 3339 or a bare `yyyy-MM-dd` (midnight UTC); every range is inclusive at both ends. An unknown parameter, an ' +
      'empty value, a scalar given twice or an invalid value is `400`, listing every problem.',
    '**Errors.** Every error answers `{ "errors": [ { "code", "field"?, "message" } ] }` (the `Error` schema) with an ' +
      '`X-Request-Id` header. Precedence: an unknown path is `404` and another method on a known path `405`, with or ' +
      'without a key; then authentication (`401`), then parameters (`400`).',
  ].join('\n\n'),
  license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
};

const tags = [
  {
    name: 'Assets',
    description:
      'Cloud and cluster assets discovered through the integrations, with counts derived from their findings.',
  },
  { name: 'Risks', description: 'Risks derived from the assets, each with a severity, a score and a lifecycle state.' },
  {
    name: 'Vulnerabilities',
    description: 'Vulnerability findings, one per vulnerability and asset, with the exemptions that match them.',
  },
  {
    name: 'Scans',
    description:
      'Scanner reports uploaded with a key that has the `ingest` scope, ingested in the background one at a time per ' +
      'tenant, and the scans `secinv ingest` recorded.',
  },
  {
    name: 'Changes',
    description:
      "The tenant's change log: what each write created, changed or removed and why, in order, followed from a " +
      "cursor; and one scan's diff.",
  },
  {
    name: 'Metrics',
    description:
      'Remediation over time, from the change log: open, opened, resolved and overdue findings per interval, and the ' +
      'time to fix by severity against the SLA.',
  },
];

/** The document's view of a route: the wildcard asset path as `{assetId}`, and example values on query parameters. */
const transform: SwaggerTransform = ({ schema, url }) => {
  let documented = schema;
  const examples = examplesOf(schema.querystring);
  if (examples) {
    const querystring = schema.querystring as { properties: Record<string, object> };
    const properties = Object.fromEntries(
      Object.entries(querystring.properties).map(([name, property]) => [
        name,
        examples[name] === undefined ? property : { ...property, examples: [examples[name]] },
      ]),
    );
    documented = { ...documented, querystring: { ...querystring, properties } };
  }
  if (url === ASSET_PATH) return { schema: { ...documented, params: AssetIdParams }, url: `${ASSETS_PATH}/:assetId` };
  return { schema: documented, url };
};

/** Registers the document generator; must run before the routes it documents are registered. */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  for (const [name, schema] of Object.entries(components)) app.addSchema({ ...schema, $id: name });
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info,
      servers: [{ url: '/', description: 'The server that serves this document' }],
      tags,
      components: {
        securitySchemes: {
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'secinv_<43 characters>',
            description:
              'A tenant API key, sent as `Authorization: Bearer <key>` (the scheme name is case-insensitive). ' +
              'Keys look like `secinv_` followed by 43 base64url characters; they are created with `secinv keys create ' +
              '--tenant <tenantId>`, shown once, and can expire or be revoked. A missing, malformed, unknown, revoked or ' +
              'expired key is `401`.',
          },
        },
      },
      security: [{ bearerAuth: [] }],
    },
    // Component schemas keep their names (`#/components/schemas/Asset`), not `def-N`.
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
    },
    transform,
  });
  // Served from the package's own files: the page works without internet access.
  await app.register(swaggerUi, { routePrefix: '/docs', theme: { title: `${info.title} ${info.version}` } });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}

/** The document as committed in openapi.json: pretty-printed with a 2-space indent and a trailing newline. */
export const openApiText = (app: FastifyInstance): string => `${JSON.stringify(app.swagger(), null, 2)}\n`;
