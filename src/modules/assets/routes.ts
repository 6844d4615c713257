import type { FastifyInstance } from 'fastify';
import { apiError } from '../../domain/errors.js';
import { idProblem } from '../../domain/ids.js';
import { errorResponses, jsonResponse, listResponse } from '../../http/docs.js';
import type { CursorCodec } from '../../http/cursor.js';
import { batchesOf, EXPORT_DOC, negotiateFormat } from '../../http/export.js';
import { sendSnapshotExport, tellPosition } from '../../http/snapshot.js';
import { Asset } from '../../domain/assets.js';
import { itemBody, listBody, pageMeta, sendJson } from '../../http/respond.js';
import type { AssetPosition } from '../../storage/index.js';
import { isSbomLinkPath, sendSbomLink, type SbomDependencies } from './sbom.js';
import {
  GetAssetResponse,
  ListAssetsResponse,
  getAssetExample,
  getAssetQuery,
  listAssetsExample,
  listAssetsQuery,
  type GetAssetQuery,
  type ListAssetsQuery,
} from './schemas.js';

export const ASSETS_PATH = '/v1/tenant/assets';
/** A wildcard, not `:assetId`: asset ids may contain `/` (ARN-like resource ids), raw or percent-encoded. */
export const ASSET_PATH = '/v1/tenant/assets/*';

export async function assetRoutes(
  app: FastifyInstance,
  sbom: SbomDependencies & { cursors: CursorCodec },
): Promise<void> {
  const { storage, cursors } = sbom;
  app.get<{ Querystring: ListAssetsQuery }>(
    ASSETS_PATH,
    {
      preValidation: negotiateFormat,
      schema: {
        operationId: 'listAssets',
        summary: 'List assets',
        description:
          'The cloud and cluster assets of the tenant of the key, filtered, sorted and in numbered pages.\n\n' +
          'Filters combine with AND; the items of one list parameter (comma-separated, or the parameter repeated) with OR. ' +
          "Without `sortBy` the order is `id` ascending; ties break by `id` in the sort's direction and nulls sort last. " +
          'The derived fields (`numberOf…Vulnerabilities`, `isVulnerable`, `hasKev`, `hasExploit`, `isExploitable`, ' +
          '`vulnerabilityScore`) count only the findings no exemption matches.\n\n' +
          'Request rules (every operation): an unknown parameter, an empty value, a scalar parameter given twice, an ' +
          'invalid enum, boolean, number or date, or a range whose start is after its end is `400`, listing every problem. ' +
          'Enum values match in any case. Date-times are RFC 3339 or `yyyy-MM-dd` (midnight UTC); ranges are inclusive.\n\n' +
          EXPORT_DOC,
        tags: ['Assets'],
        querystring: listAssetsQuery.schema,
        response: {
          200: listResponse('A page of assets and its position.', ListAssetsResponse, listAssetsExample, 'Asset'),
          ...errorResponses({
            badRequest: {
              errors: [
                { code: 'invalid_parameter', field: 'perPage', message: 'perPage must be an integer from 1 to 1000' },
                { code: 'unknown_parameter', field: 'provider', message: "unknown query parameter 'provider'" },
              ],
            },
            exports: true,
          }),
        },
      },
    },
    async (request, reply) => {
      const query = request.query;
      if (query.format !== undefined && query.format !== 'json') {
        return sendSnapshotExport(request, reply, sbom, query.format, {
          name: 'assets',
          columns: Object.keys(Asset.properties),
          batches: (snapshot) => batchesOf<AssetPosition>((after, size) => snapshot.listAssetBatch(query, size, after)),
        });
      }
      const { items, total, position } = await storage.listAssets(request.tenant, query);
      tellPosition(reply, cursors, request.tenant.tenantId, position);
      return sendJson(reply, listBody(items, pageMeta(query.page, query.perPage, total)));
    },
  );

  app.get<{ Querystring: GetAssetQuery; Params: { '*': string } }>(
    ASSET_PATH,
    {
      // An id holding a raw `/` reaches the wildcard even when it asks for the SBOM link (`…/{assetId}/sbom`).
      onRequest: async (request) => {
        if (isSbomLinkPath(request, request.params['*'])) request.uncached = true;
      },
      schema: {
        operationId: 'getAsset',
        summary: 'Get an asset',
        description:
          'One asset of the tenant of the key, by its id (its resource name), optionally with its raw data.\n\n' +
          'The id may be sent raw or percent-encoded: `/v1/tenant/assets/sirn%3Aassets%3A…` and `/v1/tenant/assets/sirn:assets:…` ' +
          'name the same asset, and an id containing `/` (an ARN-like resource id) may keep it raw or send it as `%2F`. ' +
          'An asset of another tenant is answered exactly like a missing one (`404`).',
        tags: ['Assets'],
        querystring: getAssetQuery.schema,
        response: {
          200: jsonResponse('The asset.', GetAssetResponse, getAssetExample),
          ...errorResponses({
            badRequest: {
              errors: [
                {
                  code: 'invalid_parameter',
                  field: 'include',
                  message: "include has invalid item(s) 'raw': each item must be one of rawData",
                },
              ],
            },
            notFound: true,
          }),
        },
      },
    },
    async (request, reply) => {
      const id = request.params['*'];
      if (request.uncached) {
        if (request.query.include !== undefined)
          throw apiError('unknown_parameter', "unknown query parameter 'include'", 'include');
        return sendSbomLink(sbom, request, reply, id.slice(0, -'/sbom'.length));
      }
      // An id that no record can have (empty, too long, a control character such as U+0000) is simply not found.
      const asset =
        idProblem(id) !== null
          ? undefined
          : await storage.getAsset(request.tenant, id, request.query.include?.includes('rawData') ?? false);
      // Another tenant's asset is indistinguishable from a missing one.
      if (!asset) throw apiError('not_found', 'no asset with this id');
      return sendJson(reply, itemBody(asset));
    },
  );
}
