// Multi-row inserts of a bulk write, compiled by hand. Kysely builds a node per value and compiles the tree again for
// every batch: for an import of 1M findings (about 30M values) that was ~3 s of parsing and compiling and much of the
// garbage collection beside it. The text depends only on the table, its columns, the row count and the conflict
// clause, so it is made once per shape and kept; the values are passed as they are, as Kysely would pass them (on
// SQLite; PostgreSQL takes each column of a batch as one binary array, docs/DESIGN.md §54).
import { CompiledQuery, PostgresAdapter, type Insertable, type Kysely, type Transaction } from 'kysely';
import { binaryArray, isColumnType, type ColumnType } from './pg-arrays.js';
import type { Database } from './tables.js';
import type { Dialect } from '../types.js';

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

/** SQLite: a multi-row VALUES insert of `count` rows. */
function insertText(table: string, columns: readonly string[], count: number, conflict: OnConflict): string {
  const id = `values\u0000${table}\u0000${columns.join(',')}\u0000${count}\u0000${JSON.stringify(conflict)}`;
  const known = texts.get(id);
  if (known !== undefined) return known;
  const tuple = `(${columns.map(() => '?').join(', ')})`;
  const text = `insert into ${quote(table)} (${columns.map(quote).join(', ')}) values ${Array(count).fill(tuple).join(', ')}`;
  return kept(id, text + conflictClause(columns, conflict));
}

/** The `on conflict` clause of an insert, or nothing for a plain one. */
function conflictClause(columns: readonly string[], conflict: OnConflict): string {
  if (conflict === 'fail') return '';
  const set = columns
    .filter((c) => !conflict.key.includes(c) && !conflict.keep?.includes(c))
    .map((c) => `${quote(c)} = excluded.${quote(c)}`)
    .join(', ');
  return ` on conflict (${conflict.key.map(quote).join(', ')}) do ${set === '' ? 'nothing' : `update set ${set}`}`;
}

function kept(id: string, text: string): string {
  // The last, shorter batch of each run has a shape of its own: the map stays small by forgetting the oldest.
  if (texts.size >= MAX_TEXTS) texts.delete(texts.keys().next().value as string);
  texts.set(id, text);
  return text;
}

/**
 * The SQL type of each column of a table on PostgreSQL (`format_type`), read from the catalog once per table and
 * process: storage migrates every database it opens to the latest schema before anything is written, so one table name
 * has one set of column types in a process.
 */
const columnTypes = new Map<string, Map<string, string>>();

async function typesOf(db: Db, table: string): Promise<Map<string, string>> {
  const known = columnTypes.get(table);
  if (known !== undefined) return known;
  const { rows } = await db.executeQuery<{ name: string; type: string }>(
    CompiledQuery.raw(
      `select attname as name, format_type(atttypid, atttypmod) as type from pg_attribute
       where attrelid = cast($1 as regclass) and attnum > 0 and not attisdropped`,
      [table],
    ),
  );
  const types = new Map(rows.map((r) => [r.name, r.type]));
  columnTypes.set(table, types);
  return types;
}

/**
 * PostgreSQL: `insert … select * from unnest($1, …)`, one parameter per column holding the batch's values as a binary
 * array (src/storage/db/pg-arrays.ts). The server parses and plans one short statement instead of a VALUES list of
 * thousands of parameters: 200,000 findings' rows 5.9 → 3.2–3.4 s, their packages 2.1 → 1.1 s (docs/DESIGN.md §54).
 */
async function insertUnnested(
  db: Db,
  table: string,
  columns: readonly string[],
  rows: readonly (readonly unknown[])[],
  conflict: OnConflict,
  perStatement: number,
): Promise<void> {
  const types = await typesOf(db, table);
  // A type the binary arrays do not write (`real`, EPSS scores) goes as text and is cast on the server, so its value is
  // parsed as the text of a VALUES list was: a float4 from the decimal, not from a double rounded again.
  const sent = columns.map((column, i): { type: ColumnType; array: string } => {
    const type = types.get(column);
    if (type === undefined) throw new TypeError(`${table} has no column ${column}`);
    const parameter = `$${i + 1}`;
    return isColumnType(type)
      ? { type, array: `cast(${parameter} as ${type}[])` }
      : { type: 'text', array: `cast(cast(${parameter} as text[]) as ${type}[])` };
  });
  const id = `unnest\u0000${table}\u0000${columns.join(',')}\u0000${JSON.stringify(conflict)}`;
  const text =
    texts.get(id) ??
    kept(
      id,
      `insert into ${quote(table)} (${columns.map(quote).join(', ')}) select * from unnest(${sent.map((c) => c.array).join(', ')})${conflictClause(columns, conflict)}`,
    );
  for (let start = 0; start < rows.length; start += perStatement) {
    const batch = rows.slice(start, start + perStatement);
    const parameters = columns.map((c, i) =>
      binaryArray(
        sent[i]!.type,
        batch.map((row) => row[i]),
        `${table}.${c}`,
      ),
    );
    await db.executeQuery(CompiledQuery.raw(text, parameters));
  }
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
  if (dialect === 'postgres') return insertUnnested(db, table, columns, rows, conflict, perStatement);
  for (let start = 0; start < rows.length; start += perStatement) {
    const batch = rows.slice(start, start + perStatement);
    const parameters: unknown[] = [];
    for (const row of batch) for (const value of row) parameters.push(value);
    await db.executeQuery(CompiledQuery.raw(insertText(table, columns, batch.length, conflict), parameters));
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

/** Rows to update, grouped by the columns they set (one statement text per group). */
export type UpdateGroups = Map<string, { columns: string[]; rows: unknown[][] }>;

/**
 * Adds a row to the group of the columns it sets: those of `set`, and those of `ifMoved` whose value differs from the
 * stored one. SQLite moves a row's entry in the index of every column an update sets, even to the value it has.
 */
export function addUpdate(
  groups: UpdateGroups,
  key: readonly unknown[],
  set: readonly (readonly [column: string, value: unknown])[],
  ifMoved: readonly (readonly [column: string, value: unknown, stored: unknown])[],
): void {
  const moved = [...set, ...ifMoved.filter(([, value, stored]) => value !== stored)];
  const columns = moved.map(([column]) => column);
  const row = [...key, ...moved.map(([, value]) => value)];
  const shape = columns.join(',');
  const group = groups.get(shape) ?? { columns, rows: [] };
  group.rows.push(row);
  groups.set(shape, group);
}

/**
 * Updates rows of a tenant by key: each row is its key's values (in `key`'s order), then the values of `columns`.
 *
 * SQLite: one short statement per row, prepared once and kept by the connection (src/storage/db/sqlite.ts), each a seek
 * on the primary key. An `update … from (values …)` of 500 rows at a time took 5.8 s for the flags and intel of 248,668
 * findings, against 2.8 s for the rows one at a time and 3.1 s with Kysely's per-statement overhead (docs/DESIGN.md
 * §58): the join re-reads the list for each row, and smaller lists only add statements.
 *
 * PostgreSQL: `update … from unnest($1, …)`, each column of a batch as one binary array (src/storage/db/pg-arrays.ts), a
 * round trip per `perStatement` rows.
 */
export async function updateRows(
  db: Db,
  table: 'assets' | 'vulnerabilities' | 'risks',
  tenantId: string,
  key: readonly string[],
  columns: readonly string[],
  rows: readonly (readonly unknown[])[],
  perStatement = 1000,
): Promise<void> {
  if (rows.length === 0) return;
  if (dialectOf(db) === 'postgres') return updateUnnested(db, table, tenantId, key, columns, rows, perStatement);
  const id = `update\u0000${table}\u0000${key.join(',')}\u0000${columns.join(',')}`;
  const text =
    texts.get(id) ??
    kept(
      id,
      `update ${quote(table)} set ${columns.map((c) => `${quote(c)} = ?`).join(', ')} where "tenant_id" = ? and ${key
        .map((k) => `${quote(k)} = ?`)
        .join(' and ')}`,
    );
  for (const row of rows) {
    const parameters = [...row.slice(key.length), tenantId, ...row.slice(0, key.length)];
    await db.executeQuery(CompiledQuery.raw(text, parameters));
  }
}

async function updateUnnested(
  db: Db,
  table: string,
  tenantId: string,
  key: readonly string[],
  columns: readonly string[],
  rows: readonly (readonly unknown[])[],
  perStatement: number,
): Promise<void> {
  const types = await typesOf(db, table);
  const all = [...key, ...columns];
  const sent = all.map((column, i) => {
    const type = types.get(column);
    if (type === undefined) throw new TypeError(`${table} has no column ${column}`);
    if (!isColumnType(type)) throw new TypeError(`${table}.${column} (${type}) has no binary array writer`);
    return { type, array: `cast($${i + 1} as ${type}[])` };
  });
  const id = `update-unnest\u0000${table}\u0000${key.join(',')}\u0000${columns.join(',')}`;
  const text =
    texts.get(id) ??
    kept(
      id,
      `update ${quote(table)} as t set ${columns.map((c) => `${quote(c)} = u.${quote(c)}`).join(', ')}
        from unnest(${sent.map((c) => c.array).join(', ')}) as u(${all.map(quote).join(', ')})
        where t."tenant_id" = $${all.length + 1} and ${key.map((k) => `t.${quote(k)} = u.${quote(k)}`).join(' and ')}`,
    );
  for (let start = 0; start < rows.length; start += perStatement) {
    const batch = rows.slice(start, start + perStatement);
    const parameters: unknown[] = all.map((c, i) =>
      binaryArray(
        sent[i]!.type,
        batch.map((row) => row[i]),
        `${table}.${c}`,
      ),
    );
    parameters.push(tenantId);
    await db.executeQuery(CompiledQuery.raw(text, parameters));
  }
}
