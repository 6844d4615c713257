import { sql, type Expression, type RawBuilder } from 'kysely';
import type { Dialect } from '../types.js';

// Re-exported for the modules that name the dialect beside its SQL fragments.
export type { Dialect };

/** The few SQL fragments that are spelled differently on the two databases. */
export interface SqlDialect {
  name: Dialect;
  /** True when `needle` occurs in `haystack` (plain substring, no pattern characters). */
  contains(haystack: Expression<string | null>, needle: string): RawBuilder<boolean>;
  /**
   * A stored JSON document (a blob or bytea column) as the driver reads it fastest, as text on both: PostgreSQL's bytea
   * would cross the wire hex-encoded (twice its size, encoded by the server and decoded by the client), as text it is
   * its bytes, 2 µs less a finding on each side (docs/DESIGN.md §36); SQLite's blob would be a Buffer, which
   * better-sqlite3 makes at ~4 µs for a 2 KB document against ~2 µs for the string (§56).
   */
  document(column: string): RawBuilder<string>;
  /**
   * Whole days elapsed from one ISO instant (text) to another, counted in milliseconds, at least 0: the SQL of
   * src/domain/remediation.ts `fixDays`.
   */
  elapsedDays(from: Expression<string | null>, to: Expression<string | null>): RawBuilder<number>;
}

const ref = (column: string) => sql.ref(column);

export const sqlDialects: Record<Dialect, SqlDialect> = {
  sqlite: {
    name: 'sqlite',
    contains: (h, n) => sql<boolean>`instr(${h}, ${n}) > 0`,
    // Every stored document is UTF-8 (Buffer.from of a JavaScript string), SQLite's text encoding.
    document: (column) => sql<string>`cast(${ref(column)} as text)`,
    elapsedDays: (from, to) =>
      sql<number>`max(0, cast(round((julianday(${to}) - julianday(${from})) * 86400000) as integer) / 86400000)`,
  },
  postgres: {
    name: 'postgres',
    contains: (h, n) => sql<boolean>`strpos(${h}, ${n}) > 0`,
    // Every stored document is UTF-8 (Buffer.from of a JavaScript string), which convert_from checks.
    document: (column) => sql<string>`convert_from(${ref(column)}, 'UTF8')`,
    elapsedDays: (from, to) =>
      sql<number>`greatest(0, div(cast(round(extract(epoch from (cast(${to} as timestamptz) - cast(${from} as timestamptz))) * 1000) as bigint), 86400000))::integer`,
  },
};
