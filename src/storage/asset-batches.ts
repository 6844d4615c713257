// Asset exports: the asset list in keyset batches, in the order of its numbered pages (sort column with nulls last in
// either direction, ties by id in the sort's direction), so that an export reads every batch at the cost of the
// first and neither repeats nor skips an asset because others were added or removed before it.
import type { Kysely } from 'kysely';
import type { ListAssetsQuery } from '../domain/assets.js';
import { assetDocuments, assetJson, filterExpressions, sortColumns, type AssetFilters } from './assets.js';
import type { SqlDialect } from './dialect.js';
import { fromTenant, type TenantReader } from './scope.js';
import type { Database } from './tables.js';
import type { AssetPosition, Storage } from './types.js';

export function assetBatchStore(read: TenantReader, dialect: SqlDialect): Pick<Storage, 'listAssetBatch'> {
  return {
    listAssetBatch: (scope, query: ListAssetsQuery, size, after) =>
      read(scope.tenantId, async (db) => {
        const { sortBy = 'id', sortOrder = 'ASC', page: _page, perPage: _perPage, format: _format, ...filters } = query;
        const { column, nullable } = sortColumns[sortBy];
        const direction = sortOrder === 'DESC' ? 'desc' : 'asc';
        const past = direction === 'desc' ? '<' : '>';
        const base = (db: Kysely<Database>, filters: AssetFilters) =>
          fromTenant(db, 'assets', scope.tenantId)
            .where((eb) => eb.and(filterExpressions(eb, scope.tenantId, filters, dialect, 'probe')))
            .select(['assets.id', `assets.${column} as sortValue`]);

        // Two segments, each an index range: the assets with a sort value, then (nullable columns) those without one,
        // by id. A position without a value is in the second segment.
        const rows: { id: string; sortValue: string | number | null }[] = [];
        if (!(nullable && after && after[0] === null)) {
          let valued = base(db, filters);
          if (nullable) valued = valued.where(`assets.${column}`, 'is not', null);
          if (after) {
            valued =
              column === 'id'
                ? valued.where('assets.id', past, after[1])
                : valued.where((eb) =>
                    eb(eb.refTuple(`assets.${column}`, 'assets.id'), past, eb.tuple(after[0] as never, after[1])),
                  );
          }
          if (column !== 'id') valued = valued.orderBy(`assets.${column}`, direction);
          rows.push(
            ...(await valued
              .orderBy('assets.id', direction)
              .limit(size + 1)
              .execute()),
          );
        }
        if (nullable && rows.length <= size) {
          let valueless = base(db, filters).where(`assets.${column}`, 'is', null);
          if (after && after[0] === null) valueless = valueless.where('assets.id', past, after[1]);
          rows.push(
            ...(await valueless
              .orderBy('assets.id', direction)
              .limit(size + 1 - rows.length)
              .execute()),
          );
        }

        const batch = rows.slice(0, size);
        const byId = await assetDocuments(
          db,
          scope.tenantId,
          batch.map((row) => row.id),
        );
        const last = batch[batch.length - 1];
        const next: AssetPosition | null = rows.length > size && last ? [last.sortValue, last.id] : null;
        return { items: batch.map((row) => assetJson(byId.get(row.id)!)), next };
      }),
  };
}
