// Multi-row inserts of a bulk write, compiled by hand. Kysely builds a node per value and compiles the tree again for
// every batch: for an import of 1M findings (about 30M values) that was ~3 s of parsing and compiling and much of the
// garbage collection beside it. The text depends only on the table, its columns, the row count and the conflict
// clause, so it is made once per shape and kept; the values are passed as they are, as Kysely would pass them.
import {
  CompiledQuery,
  PostgresAdapter,
  sql,
  type Insertable,
  type Kysely,
  type RawBuilder,
  type Transaction,
} from 'kysely';
import type { Database } from './tables.js';
import type { Dialect } from './types.js';

type Db = Kysely<Database> | Transaction<Database>;

/** The dialect a connection or transaction speaks, for the helpers below and others handed a transaction alone. */
export const dialectOf = (db: Db): Dialect =>
  db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite';

/**
 * What an insert does with a row whose key exists: replaces the row's other columns but those in `keep`, or fails (a
 * plain insert).
 */
export type OnConflict = { key: readonly string[]; keep?: readonly string[] } | 'fail';

const texts = new Map<string, string>();
const MAX_TEXTS = 64;

const quote = (name: string): string => `"${name}"`;

function insertText(
  dialect: Dialect,
  table: string,
  columns: readonly string[],
  count: number,
  conflict: OnConflict,
): string {
  const id = `${dialect}\u0000${table}\u0000${columns.join(',')}\u0000${count}\u0000${
    conflict === 'fail' ? '' : `${conflict.key.join(',')}\u0000${conflict.keep?.join(',') ?? ''}`
  }`;
  const known = texts.get(id);
  if (known !== undefined) return known;
  const width = columns.length;
  const tuples: string[] = [];
  for (let row = 0; row < count; row += 1) {
    const cells: string[] = [];
    for (let column = 0; column < width; column += 1)
      cells.push(dialect === 'postgres' ? `$${row * width + column + 1}` : '?');
    tuples.push(`(${cells.join(', ')})`);
  }
  let text = `insert into ${quote(table)} (${columns.map(quote).join(', ')}) values ${tuples.join(', ')}`;
  if (conflict !== 'fail') {
    const set = columns
      .filter((c) => !conflict.key.includes(c) && !conflict.keep?.includes(c))
      .map((c) => `${quote(c)} = excluded.${quote(c)}`)
      .join(', ');
    text += ` on conflict (${conflict.key.map(quote).join(', ')}) do ${set === '' ? 'nothing' : `update set ${set}`}`;
  }
  // The last, shorter batch of each run has a shape of its own: the map stays small by forgetting the oldest.
  if (texts.size >= MAX_TEXTS) texts.delete(texts.keys().next().value as string);
  texts.set(id, text);
  return text;
}

/**
 * Inserts rows, given as arrays of values in `columns`' order, `perStatement` at a time. With `{ key }`, a row whose key
 * exists replaces the existing row's other columns, as Kysely's `onConflict().doUpdateSet()` with `excluded` values.
 */
export async function insertRows(
  db: Db,
  table: keyof Database,
  columns: readonly string[],
  rows: readonly (readonly unknown[])[],
  conflict: OnConflict,
  perStatement = 1000,
): Promise<void> {
  const dialect = dialectOf(db);
  for (let start = 0; start < rows.length; start += perStatement) {
    const batch = rows.slice(start, start + perStatement);
    const parameters: unknown[] = [];
    for (const row of batch) for (const value of row) parameters.push(value);
    await db.executeQuery(CompiledQuery.raw(insertText(dialect, table, columns, batch.length, conflict), parameters));
  }
}

/**
 * Rows of one table, as objects with the same keys, upserted on `key`: a later duplicate key among them wins (one
 * statement must not name a row twice). `perStatement` rows at a time; callers keep it under both databases'
 * parameter limits (32,766 on SQLite). Columns in `keep` keep their stored value when the key exists.
 */
export async function upsertRows<T extends keyof Database>(
  db: Db,
  table: T,
  key: readonly string[],
  rows: readonly Insertable<Database[T]>[],
  perStatement: number,
  keep: readonly string[] = [],
): Promise<void> {
  if (rows.length === 0) return;
  const unique = new Map<string, Insertable<Database[T]>>();
  for (const row of rows) unique.set(key.map((k) => (row as Record<string, unknown>)[k]).join('\u0000'), row);
  const columns = Object.keys(rows[0] as object);
  const values = [...unique.values()].map((row) => columns.map((c) => (row as Record<string, unknown>)[c]));
  await insertRows(db, table, columns, values, { key, keep }, perStatement);
}

/**
 * Updates rows of a tenant by key from a list of values: `update … set … from (values …) as v` with the key columns
 * first in each row (`v.column1`…), the columns `set` writes after them. On SQLite the keys are also given as a list
 * of row values: the join alone is planned as a walk of every row of the tenant for each statement (53 ms a statement
 * on 1M findings, 5.6 s of a first KEV load), the list makes it seek each row by its key.
 */
export async function updateRows(
  db: Db,
  table: 'assets' | 'vulnerabilities',
  tenantId: string,
  key: readonly string[],
  rows: readonly (readonly unknown[])[],
  set: RawBuilder<unknown>,
): Promise<void> {
  if (rows.length === 0) return;
  const column = (name: string) => sql.ref(`${table}.${name}`);
  const keys = (row: readonly unknown[]) => sql`(${sql.join(row.slice(0, key.length))})`;
  const matches = sql.join(
    key.map((name, i) => sql`${column(name)} = ${sql.ref(`v.column${i + 1}`)}`),
    sql` and `,
  );
  const seek =
    dialectOf(db) === 'sqlite'
      ? sql`and (${sql.join(key.map(column))}) in (values ${sql.join(rows.map(keys))})`
      : sql``;
  await sql`update ${sql.table(table)} set ${set}
    from (values ${sql.join(rows.map((row) => sql`(${sql.join(row)})`))}) as v
    where ${column('tenant_id')} = ${tenantId} and ${matches} ${seek}`.execute(db);
}
