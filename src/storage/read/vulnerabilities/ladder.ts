// Numbered pages of the vulnerability list that start from a kept keyset position instead of an offset from the first
// finding. An offset costs a step per finding it passes: page 2,500 of 100 passes 249,900 entries of the sort index
// (docs/BENCHMARKS.md, "Requests no cache has seen"). A ladder keeps, per list (tenant, data version, sort, filters),
// the position of every thousandth finding: a page climbs from the highest rung at or below its offset, keeping each rung
// it passes, and then passes fewer than a thousand findings. So the first deep page of a list costs what an offset did, and
// every later page of that list at that version a seek and a short skip (docs/DESIGN.md §115).
import type { SelectQueryBuilder } from 'kysely';
import { lruCache } from '../../../lib/lru.js';
import type { Database } from '../../db/tables.js';
import type { FindingPosition } from '../../types.js';

/** Findings between rungs by default: a page passes fewer than this many beyond its rung. */
export const RUNG = 1000;
/**
 * Lists whose rungs are kept. A rung is a sort value and two ids (~150 bytes on the generated inventory); a list of
 * 1M findings has 1,000, so 64 such lists keep about 10 MB.
 */
const LISTS_KEPT = 64;

/** A finding's key in a list's order. */
interface Keyed {
  asset_id: string;
  vulnerability_id: string;
  sortValue: unknown;
}

/**
 * The ladders of the lists last paged. `rungs[i]` is the position of the finding at offset (i + 1) × rung − 1, so the
 * finding at offset (i + 1) × rung is the first after it. Rungs are kept by data version, which every write to a
 * tenant's findings bumps, so a position is never used on data it was not read from.
 */
export function findingLadders(rung = RUNG, lists = LISTS_KEPT) {
  const kept = lruCache<FindingPosition[]>(lists);
  return {
    /**
     * The `limit` rows of `list` from `offset` on, `inOrder(after)` being the list's keys in order past a position (from
     * its start when undefined). Climbs from the highest kept rung at or below the offset, keeping each rung it passes,
     * then passes what lies between the last rung and the offset, the page's rows selecting `rows(keys)` (the keys,
     * or more of each row than them).
     */
    async page<Row extends Keyed, Paged>(
      list: string,
      offset: number,
      limit: number,
      inOrder: (after: FindingPosition | undefined) => SelectQueryBuilder<Database, 'vulnerabilities', Row>,
      rows: (
        keys: SelectQueryBuilder<Database, 'vulnerabilities', Row>,
      ) => SelectQueryBuilder<Database, 'vulnerabilities', Paged>,
    ): Promise<Paged[]> {
      let rungs = kept.get(list);
      if (rungs === undefined) kept.set(list, (rungs = []));
      let climbed = Math.min(Math.floor(offset / rung), rungs.length);
      let after = climbed > 0 ? rungs[climbed - 1] : undefined;
      while ((climbed + 1) * rung <= offset) {
        const next = await inOrder(after)
          .limit(1)
          .offset(rung - 1)
          .executeTakeFirst();
        // The list ends before the offset.
        if (next === undefined) return [];
        after = [next.sortValue as string | number, next.asset_id, next.vulnerability_id];
        // Two pages of one list may climb at once: both read the same rung, the first to reach it keeps it.
        if (rungs.length === climbed) rungs.push(after);
        climbed += 1;
      }
      return rows(inOrder(after))
        .limit(limit)
        .offset(offset - climbed * rung)
        .execute();
    },
  };
}

export type FindingLadders = ReturnType<typeof findingLadders>;
