// Asset reads: the list with every filter and sort of the contract answered by SQL, and the get.
import type { Kysely } from 'kysely';
import type { ListAssetsQuery } from '../../../domain/assets.js';
import type { SqlDialect } from '../../db/dialect.js';
import { assetColumns, countable, countColumns } from './counts.js';
import { filterExpressions, type AssetFilters, type DocumentAccess } from './filters.js';
import { assetOrder } from './order.js';
import { countAssets, tenantShare } from './scan.js';
import { assetJson, DERIVED_COLUMNS, documentColumn, storedDocuments } from './documents.js';
import { pageOfAssets, pageStarts } from './pages.js';
import { compiledOnce } from '../../db/compiled.js';
import { countCache } from '../count-cache.js';
import { fromTenant, tenantState } from '../../tx/tenant.js';
import { type TenantReader } from '../../tx/read.js';
import type { Database } from '../../db/tables.js';
import type { Page, Storage, TenantScope } from '../../types.js';

export function assetStore(
  { read, readOne }: { read: TenantReader; readOne: TenantReader },
  dialect: SqlDialect,
  countColumnsMaxRows: number,
): Pick<Storage, 'listAssets' | 'getAsset'> {
  // Counting every match costs far more than fetching a page (docs/DESIGN.md §6); most filter sets are counted from
  // columns kept in memory per data version (§35).
  const count = countCache();
  const starts = pageStarts();
  // Built and compiled once: one asset is a small request, and Kysely's part of it is noticeable (§38).
  const oneAsset = compiledOnce((db, tenantId: string, id: string) =>
    fromTenant(db, 'assets', tenantId)
      .select((eb) => [
        ...DERIVED_COLUMNS,
        documentColumn(eb, 'doc').as('doc'),
        documentColumn(eb, 'raw_data').as('raw_data'),
      ])
      .where('assets.id', '=', id),
  );
  // SQLite's plans only: PostgreSQL's planner chooses its own scans (docs/DESIGN.md §81, §82).
  const share = dialect.name === 'sqlite' ? tenantShare() : undefined;
  const columnsOf = assetColumns(read, countColumnsMaxRows, share);

  const filtered = (db: Kysely<Database>, scope: TenantScope, filters: AssetFilters, access: DocumentAccess) =>
    fromTenant(db, 'assets', scope.tenantId).where((eb) =>
      eb.and(filterExpressions(eb, scope.tenantId, filters, dialect, access)),
    );

  return {
    listAssets: (scope: TenantScope, query: ListAssetsQuery): Promise<Page> =>
      read(scope.tenantId, async (db) => {
        const { sortBy = 'id', sortOrder = 'ASC', page, perPage, ...filters } = query;
        // Read in this transaction, with the rows: kept positions and counts are filed under the version they saw.
        const { version, position } = await tenantState(db, scope.tenantId);
        const order = assetOrder({ sortBy, sortOrder });
        const key = `${scope.tenantId}\u0000${version}\u0000${sortBy}\u0000${sortOrder}\u0000${JSON.stringify(filters)}`;
        // Two steps: order and page the narrow asset rows first (ids, sort keys, derived columns), then fetch the
        // documents of that page only, so the sort never carries kilobytes of JSON per row; a deep page starts from a
        // kept position, not an offset (§37).
        const assets = await pageOfAssets(
          db,
          starts,
          { key, tenantId: scope.tenantId, filters, order },
          dialect,
          page,
          perPage,
        );
        const docs = await storedDocuments(
          db,
          scope.tenantId,
          assets.map((asset) => asset.id),
        );

        const total = await count(
          db,
          scope.tenantId,
          filters,
          async () => {
            const columns = countable(filters) ? columnsOf(scope.tenantId, version) : undefined;
            if (columns !== undefined) return countColumns(columns, filters);
            const query = filtered(db, scope, filters, 'scan').select((eb) =>
              eb.fn.countAll<number | string>().as('n'),
            );
            if (share !== undefined) return countAssets(db, query, filters, () => share(db, scope.tenantId, version));
            return Number((await query.executeTakeFirstOrThrow()).n);
          },
          version,
        );
        return { items: assets.map((asset) => assetJson(asset, docs.get(asset.id)!)), total, position };
      }),

    getAsset: (scope: TenantScope, id: string, withRawData: boolean): Promise<Buffer | undefined> =>
      readOne(scope.tenantId, async (db) => {
        const [row] = await oneAsset(db, scope.tenantId, id);
        if (row === undefined || row.doc === null || row.raw_data === null) return undefined;
        return assetJson(row, row.doc, withRawData ? row.raw_data : undefined);
      }),
  };
}
