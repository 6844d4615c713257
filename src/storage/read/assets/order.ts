// The order of the asset list (sort column with nulls last in either direction, ties by id in the sort's direction),
// read from a keyset position: numbered pages (src/storage/read/assets/list.ts) and exports (src/storage/read/assets/batches.ts) both
// walk it through seekAssets, so a page and an export batch list the same assets in the same order.
import type { Kysely } from 'kysely';
import type { ListAssetsQuery } from '../../../domain/assets.js';
import { DERIVED_COLUMNS, type DerivedColumns } from './documents.js';
import { filterExpressions, sortColumns, type AssetFilters } from './filters.js';
import type { SqlDialect } from '../../db/dialect.js';
import { fromTenant } from '../../tx/tenant.js';
import type { AssetTable, Database } from '../../db/tables.js';
import type { AssetPosition } from '../../types.js';

export interface AssetOrder {
  column: keyof AssetTable;
  nullable: boolean;
  direction: 'asc' | 'desc';
}

export const assetOrder = ({ sortBy = 'id', sortOrder = 'ASC' }: Pick<ListAssetsQuery, 'sortBy' | 'sortOrder'>) => ({
  ...sortColumns[sortBy],
  direction: sortOrder === 'DESC' ? ('desc' as const) : ('asc' as const),
});

export interface OrderedId {
  id: string;
  sortValue: string | number | null;
}

/** An asset of the list with what its JSON needs besides its stored document. */
export type OrderedAsset = OrderedId & DerivedColumns;

export const positionOf = (row: OrderedId): AssetPosition => [row.sortValue, row.id];

/**
 * Up to `limit` assets of the list after `after` (from the start without it), the first `skip` of them passed over.
 * Two segments, each an index range: the assets with a sort value, then (nullable columns) those without one, by id.
 * A position without a value is in the second segment. The skip runs through the first segment into the second. The
 * derived columns come with the sort keys (SQLite reads them only for the rows it returns, not the skipped ones).
 */
export async function seekAssets(
  db: Kysely<Database>,
  tenantId: string,
  filters: AssetFilters,
  dialect: SqlDialect,
  { column, nullable, direction }: AssetOrder,
  after: AssetPosition | undefined,
  skip: number,
  limit: number,
): Promise<OrderedAsset[]> {
  const past = direction === 'desc' ? '<' : '>';
  const selected = ['assets.id', `assets.${column} as sortValue`, ...DERIVED_COLUMNS] as const;
  const base = () =>
    fromTenant(db, 'assets', tenantId).where((eb) =>
      eb.and(filterExpressions(eb, tenantId, filters, dialect, 'probe')),
    );
  const rows: OrderedAsset[] = [];
  let left = skip;
  if (!(nullable && after && after[0] === null)) {
    let valued = base();
    if (nullable) valued = valued.where(`assets.${column}`, 'is not', null);
    if (after) {
      valued =
        column === 'id'
          ? valued.where('assets.id', past, after[1])
          : valued.where((eb) =>
              eb(eb.refTuple(`assets.${column}`, 'assets.id'), past, eb.tuple(after[0] as never, after[1])),
            );
    }
    let ordered = valued.select(selected);
    if (column !== 'id') ordered = ordered.orderBy(`assets.${column}`, direction);
    ordered = ordered.orderBy('assets.id', direction).limit(limit);
    rows.push(...(await (left > 0 ? ordered.offset(left) : ordered).execute()));
    if (nullable && rows.length < limit && left > 0) {
      // A short first segment with rows held every skipped one; an empty one held fewer than `left`: how many.
      left -=
        rows.length > 0
          ? left
          : Number(
              (
                await db
                  .selectFrom(valued.select('assets.id').limit(left).as('skipped'))
                  .select((eb) => eb.fn.countAll<number | string>().as('n'))
                  .executeTakeFirstOrThrow()
              ).n,
            );
    }
  }
  if (nullable && rows.length < limit) {
    let valueless = base().where(`assets.${column}`, 'is', null);
    if (after && after[0] === null) valueless = valueless.where('assets.id', past, after[1]);
    const ordered = valueless
      .select(selected)
      .orderBy('assets.id', direction)
      .limit(limit - rows.length);
    rows.push(...(await (left > 0 ? ordered.offset(left) : ordered).execute()));
  }
  return rows;
}
