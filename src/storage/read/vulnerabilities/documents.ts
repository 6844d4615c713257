// A finding's stored document lives apart from its narrow row (docs/DESIGN.md §44): the rows every filter, sort, count
// and feed load reads stay small, and the few readers of documents (a page's rows, the risk rules) fetch them by key:
// the tenant and the finding's integer id (§45).
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { SqlDialect } from '../../db/dialect.js';
import type { Dialect } from '../../types.js';
import type { Database } from '../../db/tables.js';

/**
 * A finding's stored document, as a subquery of its row (`row` names the finding's table or alias): one key probe for
 * each row the statement returns, whatever the statistics. As a join, PostgreSQL without fresh statistics hashed the
 * whole documents table for each export batch (1,900 findings/s instead of 45,000), and SQLite with those of a large
 * tenant made the documents the outer loop of a page's read (0.84–1.2 s on 1M findings). `read` spells the column
 * (as stored by default). The documents are filtered by the tenant itself too, not only through the row: Citus prunes
 * each table's shards by its own predicates, and a correlated column is not one (docs/SCALING.md).
 */
export const documentOf = <T = Buffer>(
  tenantId: string,
  row = 'vulnerabilities',
  read: (column: string) => RawBuilder<T> = (column) => sql<T>`${sql.ref(column)}`,
): RawBuilder<T> =>
  sql<T>`(select ${read('d.doc')} from vulnerability_documents as d
    where d.tenant_id = ${tenantId} and d.tenant_id = ${sql.ref(`${row}.tenant_id`)}
      and d.finding_id = ${sql.ref(`${row}.id`)})`;

/** The documents' key (migration 0011): the finding's id alone on SQLite, the tenant and the id on PostgreSQL. */
export const documentKey = (dialect: Dialect): readonly string[] =>
  dialect === 'sqlite' ? ['finding_id'] : ['tenant_id', 'finding_id'];

export interface FindingKey {
  asset_id: string;
  vulnerability_id: string;
}

/** A finding's two stored halves: its document and its intel (docs/DESIGN.md §44). */
export interface StoredFinding extends FindingKey {
  is_exempted: number;
  doc: string;
  intel: string | null;
  due_at: string | null;
}

/**
 * The end of a lateral key probe (`alias` names its table) that PostgreSQL must plan on its own, once per outer row:
 * a subquery with an ORDER BY is never flattened into the join. On the tenant, which the probe fixes: the planner drops
 * the sort. Citus pushes a lateral subquery over a table function down unless it has an OFFSET, a LIMIT, a GROUP BY
 * without the distribution column, an aggregate without GROUP BY, a window or a DISTINCT: `offset 0`, the usual fence,
 * is refused there (docs/SCALING.md).
 */
export const keyProbe = (alias: string): RawBuilder<unknown> => sql`order by ${sql.ref(`${alias}.tenant_id`)}`;

/** Keys per statement: two parameters each, far below SQLite's limit. */
const KEYS_PER_STATEMENT = 1000;

/**
 * The stored halves of exactly these findings of a tenant, each by its primary key. Two `in` lists (assets, ids) would
 * also match every other finding of the page's assets that has one of the page's ids, and read its document: ~10 times
 * the page on a 2,000-row page of a large tenant. SQLite takes the pairs as a row-value list; PostgreSQL as two arrays
 * probed one pair at a time, which no statistics can turn into a scan (as in src/storage/write/stored.ts): the probe's
 * `order by` (on the tenant, which sorts nothing) keeps the planner from flattening it into a join, the fence Citus
 * accepts in a lateral subquery over a table function, where it refuses `offset 0` (see keyProbe).
 */
export async function storedFindings(
  db: Kysely<Database>,
  dialect: SqlDialect,
  tenantId: string,
  keys: readonly FindingKey[],
): Promise<StoredFinding[]> {
  const found: StoredFinding[] = [];
  const doc = documentOf(tenantId, 'v', (column) => dialect.document(column));
  for (let i = 0; i < keys.length; i += KEYS_PER_STATEMENT) {
    const chunk = keys.slice(i, i + KEYS_PER_STATEMENT);
    const { rows } =
      dialect.name === 'sqlite'
        ? await sql<StoredFinding>`select v.asset_id, v.vulnerability_id, v.is_exempted, v.intel, v.due_at, ${doc} as doc
            from vulnerabilities as v
            where v.tenant_id = ${tenantId} and (v.asset_id, v.vulnerability_id)
              in (values ${sql.join(chunk.map((k) => sql`(${k.asset_id}, ${k.vulnerability_id})`))})`.execute(db)
        : await sql<StoredFinding>`select f.asset_id, f.vulnerability_id, f.is_exempted, f.intel, f.due_at, f.doc
            from unnest(cast(${chunk.map((k) => k.asset_id)} as text[]),
              cast(${chunk.map((k) => k.vulnerability_id)} as text[])) as k(asset_id, vulnerability_id)
            cross join lateral (select v.asset_id, v.vulnerability_id, v.is_exempted, v.intel, v.due_at, ${doc} as doc
              from vulnerabilities as v
              where v.tenant_id = ${tenantId} and v.asset_id = k.asset_id
                and v.vulnerability_id = k.vulnerability_id ${keyProbe('v')}) as f`.execute(db);
    found.push(...rows);
  }
  return found;
}
