// Asset exports: the asset list in keyset batches, in the order of its numbered pages (sort column with nulls last in
// either direction, ties by id in the sort's direction), so that an export reads every batch at the cost of the
// first and neither repeats nor skips an asset because others were added or removed before it.
import type { ListAssetsQuery } from '../../../domain/assets.js';
import { assetOrder, positionOf, seekAssets } from './order.js';
import { assetJson, storedDocuments } from './documents.js';
import type { SqlDialect } from '../../db/dialect.js';
import type { TenantReader } from '../../tx/read.js';
import type { AssetPosition, Storage } from '../../types.js';

export function assetBatchStore(read: TenantReader, dialect: SqlDialect): Pick<Storage, 'listAssetBatch'> {
  return {
    listAssetBatch: (scope, query: ListAssetsQuery, size, after) =>
      read(scope.tenantId, async (db) => {
        const {
          sortBy: _sortBy,
          sortOrder: _sortOrder,
          page: _page,
          perPage: _perPage,
          format: _format,
          ...filters
        } = query;
        const rows = await seekAssets(db, scope.tenantId, filters, dialect, assetOrder(query), after, 0, size + 1);
        const batch = rows.slice(0, size);
        const docs = await storedDocuments(
          db,
          scope.tenantId,
          batch.map((row) => row.id),
        );
        const last = batch[batch.length - 1];
        const next: AssetPosition | null = rows.length > size && last ? positionOf(last) : null;
        return { items: batch.map((row) => assetJson(row, docs.get(row.id)!)), next };
      }),
  };
}
