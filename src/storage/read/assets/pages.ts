// Numbered pages of the asset list that start from a keyset position instead of an offset from the first asset.
// An offset costs a step per asset it passes (page 1,000 of 100 on 100,000 assets: 99,900 index entries, 7× page 1);
// the positions where pages already served began and ended are kept per list and data version, and a page starts from
// the nearest one at or before it (docs/DESIGN.md §37).
import type { Kysely } from 'kysely';
import type { AssetFilters } from './filters.js';
import { positionOf, seekAssets, type AssetOrder, type OrderedAsset } from './order.js';
import type { SqlDialect } from '../../db/dialect.js';
import { lruCache } from '../../../lib/lru.js';
import type { Database } from '../../db/tables.js';
import type { AssetPosition } from '../../types.js';

/**
 * Lists (tenant, data version, filters, order) whose positions are kept, and positions kept per list: a position holds
 * an id (~150 bytes on the generated inventory) and a sort value, so at most ~32,000 of them take about 10 MB.
 */
const LISTS_KEPT = 128;
const POSITIONS_PER_LIST = 256;

/**
 * Offsets of a list whose preceding asset is known: offset n → the sort value and id of the n-th asset, so the asset
 * at offset n is the first after it. Kept by data version, which every write that changes a tenant's assets bumps, so
 * a position is never used on data it was not read from.
 */
export function pageStarts(lists = LISTS_KEPT, perList = POSITIONS_PER_LIST) {
  const kept = lruCache<Map<number, AssetPosition>>(lists);
  return {
    /** The largest known offset at or before `offset` (0, the start, when none) and the position there. */
    nearest(list: string, offset: number): [number, AssetPosition | undefined] {
      let best = 0;
      let at: AssetPosition | undefined;
      for (const [known, position] of kept.get(list) ?? []) {
        if (known <= offset && known > best) [best, at] = [known, position];
      }
      return [best, at];
    },
    remember(list: string, offset: number, position: AssetPosition): void {
      let positions = kept.get(list);
      if (positions === undefined) kept.set(list, (positions = new Map<number, AssetPosition>()));
      positions.delete(offset);
      positions.set(offset, position);
      // The oldest remembered out first (a Map iterates in insertion order).
      if (positions.size > perList) positions.delete(positions.keys().next().value as number);
    },
  };
}

export type PageStarts = ReturnType<typeof pageStarts>;

/**
 * The assets of one numbered page, in the list's order. From the nearest known position it passes over what lies between
 * (nothing when the page starts there), reading one asset before the page so that its start is known next time, and
 * keeps where it ends, so the next page starts there too.
 */
export async function pageOfAssets(
  db: Kysely<Database>,
  starts: PageStarts,
  list: { key: string; tenantId: string; filters: AssetFilters; order: AssetOrder },
  dialect: SqlDialect,
  page: number,
  perPage: number,
): Promise<OrderedAsset[]> {
  const offset = (page - 1) * perPage;
  const [known, after] = starts.nearest(list.key, offset);
  const lead = offset > known ? 1 : 0;
  const rows = await seekAssets(
    db,
    list.tenantId,
    list.filters,
    dialect,
    list.order,
    after,
    offset - known - lead,
    perPage + lead,
  );
  if (lead === 1 && rows[0] !== undefined) starts.remember(list.key, offset, positionOf(rows[0]));
  const assets = rows.slice(lead);
  const last = rows[rows.length - 1];
  if (assets.length === perPage && last !== undefined) starts.remember(list.key, offset + perPage, positionOf(last));
  return assets;
}
