import type { FastifyInstance } from 'fastify';
import { apiError } from '../../errors.js';
import { itemBody, listBody, pageMeta, sendJson } from '../../http/respond.js';
import type { Storage } from '../../storage/index.js';
import { getAssetQuery, listAssetsQuery, type GetAssetQuery, type ListAssetsQuery } from './schemas.js';

export const ASSETS_PATH = '/v1/tenant/assets';
/** A wildcard, not `:assetId`: asset ids may contain `/` (ARN-like resource ids), raw or percent-encoded. */
export const ASSET_PATH = '/v1/tenant/assets/*';

export async function assetRoutes(app: FastifyInstance, { storage }: { storage: Storage }): Promise<void> {
  app.get<{ Querystring: ListAssetsQuery }>(ASSETS_PATH, {
    schema: { querystring: listAssetsQuery.schema },
  }, async (request, reply) => {
    const query = request.query;
    const { items, total } = await storage.listAssets(request.tenant, query);
    return sendJson(reply, listBody(items, pageMeta(query.page, query.perPage, total)));
  });

  app.get<{ Querystring: GetAssetQuery; Params: { '*': string } }>(ASSET_PATH, {
    schema: { querystring: getAssetQuery.schema },
  }, async (request, reply) => {
    const id = request.params['*'];
    const asset = id === '' ? undefined : await storage.getAsset(request.tenant, id, request.query.include?.includes('rawData') ?? false);
    // Another tenant's asset is indistinguishable from a missing one.
    if (!asset) throw apiError('not_found', 'no asset with this id');
    return sendJson(reply, itemBody(asset));
  });
}
