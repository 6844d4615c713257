import { sql, type Expression, type RawBuilder } from 'kysely';
import type { Dialect } from './types.js';

// Re-exported for the modules that name the dialect beside its SQL fragments.
export type { Dialect };

type Direction = 'asc' | 'desc';

/** The few SQL fragments that are spelled differently on the two databases. */
export interface SqlDialect {
  name: Dialect;
  /** True when `needle` occurs in `haystack` (plain substring, no pattern characters). */
  contains(haystack: Expression<string | null>, needle: string): RawBuilder<boolean>;
  /**
   * ORDER BY terms for a nullable column with nulls last in either direction, spelled so that the index made by
   * nullsLastIndex() serves them. SQLite puts nulls first ascending and last descending; PostgreSQL the reverse.
   */
  nullsLastOrder(column: string, direction: Direction): RawBuilder<unknown>[];
  /** The index expression (after tenant_id) that serves nullsLastOrder() in the direction the default gets wrong. */
  nullsLastIndex(column: string): string;
  /**
   * A stored JSON document (a blob or bytea column) as the driver reads it fastest: SQLite's blob is a Buffer as is;
   * PostgreSQL's bytea would cross the wire hex-encoded (twice its size, encoded by the server and decoded by the
   * client), as text it is its bytes, 2 µs less a finding on each side (docs/DESIGN.md §36).
   */
  document(column: string): RawBuilder<Buffer | string>;
}

const ref = (column: string) => sql.ref(column);

export const sqlDialects: Record<Dialect, SqlDialect> = {
  sqlite: {
    name: 'sqlite',
    contains: (h, n) => sql<boolean>`instr(${h}, ${n}) > 0`,
    nullsLastOrder: (column, direction) =>
      direction === 'asc'
        ? [sql`${ref(column)} is null`, sql`${ref(column)} asc`, sql`id asc`]
        : [sql`${ref(column)} desc`, sql`id desc`],
    nullsLastIndex: (column) => `${column} is null, ${column}, id`,
    document: (column) => sql<Buffer>`${ref(column)}`,
  },
  postgres: {
    name: 'postgres',
    contains: (h, n) => sql<boolean>`strpos(${h}, ${n}) > 0`,
    nullsLastOrder: (column, direction) =>
      direction === 'asc'
        ? [sql`${ref(column)} asc`, sql`id asc`]
        : [sql`${ref(column)} desc nulls last`, sql`id desc`],
    nullsLastIndex: (column) => `${column} desc nulls last, id desc`,
    // Every stored document is UTF-8 (Buffer.from of a JavaScript string), which convert_from checks.
    document: (column) => sql<string>`convert_from(${ref(column)}, 'UTF8')`,
  },
};
