// Findings in the order of a 0/1 flag (sortBy=hasKev or hasExploit), then asset and vulnerability id. No index gives
// that order: on SQLite only the findings that have the flag are indexed (a partial index, docs/DESIGN.md §63), and on
// PostgreSQL the flags are in no index at all (§71). So the list is read as two runs, one per value of the flag, each
// in (asset_id, vulnerability_id) order, which SQLite's partial index gives for the flagged run and the primary key
// for the other (on PostgreSQL for both, with the flag as a filter).
import { sql, type SelectQueryBuilder } from 'kysely';
import type { Database } from '../../db/tables.js';
import type { FindingPosition } from '../../types.js';
import type { FindingLadders } from './ladder.js';

/** A finding's key in a list and its sort value (the flag, 0 or 1). */
export interface FlagKey {
  asset_id: string;
  vulnerability_id: string;
  is_exempted: number;
  sortValue: number;
  /** The document, intel and due date, when `FlagPage.rows` selected them with the keys. */
  doc?: string;
  intel?: string | null;
  due_at?: string | null;
}

export interface FlagPage {
  direction: 'asc' | 'desc';
  /** The last finding of the batch before (a keyset batch), or none. */
  after: FindingPosition | undefined;
  limit: number;
  offset: number;
  /** The ladders a numbered page starts from, and the name of this list among them (each run a list of its own). */
  ladders: FindingLadders;
  list: () => string;
  /** What each row of the page carries besides its keys: on SQLite its document, as for any page (list.ts). */
  rows: <Row>(
    keys: SelectQueryBuilder<Database, 'vulnerabilities', Row>,
  ) => SelectQueryBuilder<Database, 'vulnerabilities', Row>;
}

/**
 * The keys of one page: `findingsWith(value)` is the filtered findings whose flag is `value`, `countWith(value)` their
 * number (to skip a whole run for a numbered page past it), `only` the value a filter of the request fixes, if any.
 */
export async function flagOrdered(
  findingsWith: (value: boolean) => SelectQueryBuilder<Database, 'vulnerabilities', object>,
  countWith: (value: boolean) => Promise<number>,
  only: boolean | undefined,
  page: FlagPage,
): Promise<FlagKey[]> {
  const { direction, after, limit } = page;
  let { offset } = page;
  const runs = (direction === 'desc' ? [1, 0] : [0, 1]).filter((v) => only === undefined || only === (v === 1));
  const keys: FlagKey[] = [];
  // A keyset batch goes on in the run its position is in, past it, and the runs after it from their start.
  const position = after === undefined ? undefined : Number(after[0]);
  for (const value of runs) {
    if (keys.length >= limit) break;
    if (position !== undefined && (direction === 'desc' ? value > position : value < position)) continue;
    if (offset > 0) {
      const counted = await countWith(value === 1);
      if (offset >= counted) {
        offset -= counted;
        continue;
      }
    }
    const inRun = (at: FindingPosition | undefined) => {
      const run = findingsWith(value === 1).select([
        'vulnerabilities.asset_id',
        'vulnerabilities.vulnerability_id',
        'vulnerabilities.is_exempted',
        sql.lit(value).as('sortValue'),
      ]);
      return (
        at === undefined
          ? run
          : run.where((eb) =>
              eb(
                eb.refTuple('vulnerabilities.asset_id', 'vulnerabilities.vulnerability_id'),
                direction === 'desc' ? '<' : '>',
                eb.tuple(at[1], at[2]),
              ),
            )
      )
        .orderBy('vulnerabilities.asset_id', direction)
        .orderBy('vulnerabilities.vulnerability_id', direction);
    };
    // A numbered page within the run starts from the run's nearest kept rung (src/storage/read/vulnerabilities/ladder.ts).
    const rows =
      offset > 0
        ? await page.ladders.page(`${page.list()}\u0000${value}`, offset, limit - keys.length, inRun, page.rows)
        : await page
            .rows(inRun(position === value ? after : undefined))
            .limit(limit - keys.length)
            .execute();
    offset = 0;
    for (const row of rows as FlagKey[]) keys.push({ ...row, sortValue: Number(row.sortValue) });
  }
  return keys;
}
