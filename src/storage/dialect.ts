import { sql, type Expression, type RawBuilder } from 'kysely';
import type { Dialect } from './types.js';

// Re-exported for the modules that name the dialect beside its SQL fragments.
export type { Dialect };

/** The few SQL fragments that are spelled differently on the two databases. */
export interface SqlDialect {
  name: Dialect;
  /** True when `needle` occurs in `haystack` (plain substring, no pattern characters). */
  contains(haystack: Expression<string | null>, needle: string): RawBuilder<boolean>;
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
    document: (column) => sql<Buffer>`${ref(column)}`,
  },
  postgres: {
    name: 'postgres',
    contains: (h, n) => sql<boolean>`strpos(${h}, ${n}) > 0`,
    // Every stored document is UTF-8 (Buffer.from of a JavaScript string), which convert_from checks.
    document: (column) => sql<string>`convert_from(${ref(column)}, 'UTF8')`,
  },
};
