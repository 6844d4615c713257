// The SBOM of an asset (extensions.md §3): `GET /v1/tenant/assets/{assetId}/sbom` answers, as the vendor does, a
// signed link and the document's size; `GET /v1/sbom/{token}` downloads the CycloneDX 1.6 document without a key,
// like a presigned URL. The link carries its own expiry, so its answer is never tagged or kept (docs/DESIGN.md §28).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { v5 as uuidv5 } from 'uuid';
import type { Asset } from '../../domain/assets.js';
import { apiError } from '../../domain/errors.js';
import { idProblem } from '../../domain/ids.js';
import { keyUsable } from '../../domain/keys.js';
import { querySpec } from '../../domain/query.js';
import { SBOM_MEDIA_TYPE } from '../../domain/sbom-format.js';
import type { ListVulnerabilitiesQuery, Vulnerability } from '../../domain/vulnerabilities.js';
import { errorResponses, jsonResponse } from '../../http/docs.js';
import { packageVersion } from '../../http/version.js';
import { defineQuery } from '../../http/query.js';
import { sendJson } from '../../http/respond.js';
import { forbidden, type DownloadTokens } from '../../http/signed-url.js';
import type { Storage, TenantScope } from '../../storage/index.js';
import { AssetIdParams } from './schemas.js';

export const SBOM_LINK_PATH = '/v1/tenant/assets/:assetId/sbom';
export const SBOM_DOWNLOAD_PATH = '/v1/sbom/:token';
/** How long a link works, as the vendor's links do. */
export const SBOM_LINK_SECONDS = 3600;

export const sbomLinkQuery = defineQuery(querySpec({}));
/** A fixed namespace: a BOM's serial number is a UUIDv5 of (tenant, asset, data version). */
const SERIAL_NAMESPACE = 'a0d3c2f4-5b1e-4c77-9e4a-6f1b8d2e7c90';
const FINDINGS_PER_READ = 2000;

export interface SbomDependencies {
  storage: Storage;
  tokens: DownloadTokens;
  now: () => Date;
  /** The server's URL as clients reach it; undefined: the request's scheme and Host. */
  publicUrl: string | undefined;
}

const noPackages = () =>
  apiError(
    'not_found',
    'no package is known for this asset: its SBOM lists the packages that scanner reports or SBOMs ingested for it name',
  );

/** Every finding of the asset (exempted or not), read in keyset batches. */
async function findingsOf(storage: Storage, scope: TenantScope, assetId: string): Promise<Vulnerability[]> {
  const findings: Vulnerability[] = [];
  for (const isExempted of [false, true]) {
    const query: ListVulnerabilitiesQuery = {
      assetIds: [assetId],
      isExempted,
      sortBy: 'severityLevelValue',
      sortOrder: 'DESC',
      page: 1,
      perPage: FINDINGS_PER_READ,
      includeTotal: false,
      format: 'json',
    };
    let after: Parameters<Storage['listVulnerabilities']>[2];
    do {
      const batch = await storage.listVulnerabilities(scope, query, after);
      for (const item of batch.items) findings.push(JSON.parse(item.toString('utf8')) as Vulnerability);
      after = batch.next ?? undefined;
    } while (after);
  }
  return findings;
}

/** The asset's SBOM as JSON text; throws 404 for an unknown asset or one with no known package. */
async function assetSbom(deps: SbomDependencies, scope: TenantScope, assetId: string): Promise<Buffer> {
  const stored = idProblem(assetId) !== null ? undefined : await deps.storage.getAsset(scope, assetId, false);
  // Another tenant's asset is indistinguishable from a missing one.
  if (!stored) throw apiError('not_found', 'no asset with this id');
  const asset = JSON.parse(stored.toString('utf8')) as Asset;
  const [findings, purls] = await Promise.all([
    findingsOf(deps.storage, scope, assetId),
    deps.storage.findingPurls(scope, assetId),
  ]);
  const purlAt = new Map(purls.map((p) => [`${p.vulnerabilityId}\u0000${p.position}`, p.purl]));
  // Loaded with the first SBOM: the CycloneDX library was a sixth of the server's start (docs/DESIGN.md §79).
  const { buildSbom } = await import('../../domain/sbom.js');
  const text = buildSbom({
    asset,
    findings,
    purlOf: (vulnerabilityId, position) => purlAt.get(`${vulnerabilityId}\u0000${position}`) ?? null,
    serialNumber: uuidv5(JSON.stringify([scope.tenantId, assetId, scope.dataVersion]), SERIAL_NAMESPACE),
    timestamp: deps.now(),
    toolVersion: packageVersion(),
  });
  if (text === null) throw noPackages();
  return Buffer.from(text);
}

/** The link answer for an asset: used by the `{assetId}/sbom` route and by the asset wildcard for ids holding `/`. */
export async function sendSbomLink(
  deps: SbomDependencies,
  request: FastifyRequest,
  reply: FastifyReply,
  assetId: string,
): Promise<FastifyReply> {
  const document = await assetSbom(deps, request.tenant, assetId);
  const expiresAt = Math.floor(deps.now().getTime() / 1000) + SBOM_LINK_SECONDS;
  const token = deps.tokens.sign({ tenantId: request.tenant.tenantId, assetId, keyId: request.apiKeyId, expiresAt });
  const base = deps.publicUrl ?? `${request.protocol}://${request.host}`;
  const body = {
    data: { url: `${base}/v1/sbom/${token}` },
    meta: { fileSizeInBytes: document.length, expiresInSeconds: SBOM_LINK_SECONDS },
  };
  return sendJson(reply, Buffer.from(JSON.stringify(body)));
}

/**
 * Whether a request to the asset wildcard asks for an SBOM link: the id it names ends in a `/sbom` segment that was
 * sent as a literal `/`, not as `%2F` (which keeps it part of the id).
 */
export const isSbomLinkPath = (request: FastifyRequest, id: string): boolean =>
  id.endsWith('/sbom') && /\/sbom$/.test((request.raw.url ?? '').split('?')[0] ?? '');

export const SbomLinkResponse = Type.Object({
  data: Type.Object({
    url: Type.String({
      format: 'uri',
      description:
        'A signed link on this server that downloads the SBOM without an `Authorization` header, until it expires.',
    }),
  }),
  meta: Type.Object({
    fileSizeInBytes: Type.Integer({ description: 'The size of the SBOM document when the link was made' }),
    expiresInSeconds: Type.Integer({ description: 'How long the link works from now' }),
  }),
});

const NOT_FOUND =
  'No asset with this id in the tenant of the key (an asset of another tenant is indistinguishable from a missing one), ' +
  'or no package is known for it. Code: `not_found`.';

/** `GET /v1/tenant/assets/{assetId}/sbom`, in the authenticated scope. */
export async function sbomLinkRoute(api: FastifyInstance, deps: SbomDependencies): Promise<void> {
  api.get<{ Params: { assetId: string } }>(
    SBOM_LINK_PATH,
    {
      onRequest: async (request) => {
        request.uncached = true;
      },
      schema: {
        operationId: 'getAssetSbom',
        summary: "Get a link to an asset's SBOM",
        description:
          "A signed, expiring link to the asset's software bill of materials (CycloneDX 1.6 JSON): the asset as " +
          '`metadata.component`, one component per package known for it (with its purl where the scanner gave one), ' +
          'and its findings as `vulnerabilities` (id, ratings, affects). Fetch `data.url` within `meta.expiresInSeconds`; ' +
          'it needs no key. An id containing `/` may be sent raw or as `%2F`; an asset whose id itself ends in `/sbom` ' +
          'is named with that `/` as `%2F`.',
        tags: ['Assets'],
        params: AssetIdParams,
        querystring: sbomLinkQuery.schema,
        response: {
          200: jsonResponse('The link and the size of the document.', SbomLinkResponse, {
            data: {
              url: 'https://secinv.example.com/v1/sbom/WzEsIjgxMGEwYzVkIiwic2lybjphc3NldHMifQ.bm90IGEgcmVhbCBzaWduYXR1cmU',
            },
            meta: { fileSizeInBytes: 48213, expiresInSeconds: SBOM_LINK_SECONDS },
          }),
          ...errorResponses({
            badRequest: {
              errors: [{ code: 'unknown_parameter', field: 'format', message: "unknown query parameter 'format'" }],
            },
            notFound: NOT_FOUND,
          }),
        },
      },
    },
    async (request, reply) => sendSbomLink(deps, request, reply, request.params.assetId),
  );
}

/** `GET /v1/sbom/{token}`: outside the authenticated scope, the token is the credential. */
export async function sbomDownloadRoute(app: FastifyInstance, deps: SbomDependencies): Promise<void> {
  app.get<{ Params: { token: string } }>(
    SBOM_DOWNLOAD_PATH,
    {
      schema: {
        operationId: 'downloadSbom',
        summary: 'Download an SBOM (signed link)',
        description:
          'The document a `getAssetSbom` link names, as CycloneDX 1.6 JSON, built from the inventory as it is when ' +
          'fetched. No `Authorization` header: the link is the credential. An altered or expired link, or one made ' +
          'with a key that has since been revoked or has expired, is `403`.',
        tags: ['Assets'],
        security: [],
        params: Type.Object({
          token: Type.String({ description: 'The signed token of the link (opaque)' }),
        }),
        response: {
          200: {
            description: 'The SBOM.',
            headers: {
              'Content-Disposition': {
                description: '`attachment; filename="<the asset id\'s last segment>.cdx.json"`',
                type: 'string',
              },
            },
            content: {
              [SBOM_MEDIA_TYPE]: {
                schema: {
                  type: 'object',
                  description: 'A CycloneDX 1.6 BOM (https://cyclonedx.org/docs/1.6/json/).',
                  additionalProperties: true,
                },
              },
            },
          },
          403: jsonResponse(
            'The link was altered, has expired, or its key was revoked or has expired. Code: `forbidden`.',
            Type.Ref('Error'),
            { errors: [{ code: 'forbidden', message: 'this download link has expired: ask for a new one' }] },
          ),
          404: jsonResponse(
            'The asset no longer exists, or no package is known for it any more. Code: `not_found`.',
            Type.Ref('Error'),
            { errors: [{ code: 'not_found', message: 'no asset with this id' }] },
          ),
        },
      },
    },
    async (request, reply) => {
      const now = deps.now();
      const grant = deps.tokens.verify(request.params.token, Math.floor(now.getTime() / 1000));
      const key = await deps.storage.findKeyById(grant.keyId);
      if (!key || key.tenantId !== grant.tenantId || !keyUsable(key, now.toISOString()))
        throw forbidden('was made with a key that is no longer valid');
      const scope = { tenantId: key.tenantId, dataVersion: key.dataVersion };
      const document = await assetSbom(deps, scope, grant.assetId);
      const name = grant.assetId.split(/[/:]/).pop() || 'asset';
      return reply
        .type(SBOM_MEDIA_TYPE)
        .header('Cache-Control', 'no-store')
        .header('Content-Disposition', `attachment; filename="${name.replace(/[^A-Za-z0-9._-]/g, '_')}.cdx.json"`)
        .send(document);
    },
  );
}
