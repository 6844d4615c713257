import { sql, type Expression, type RawBuilder } from 'kysely';

export type Dialect = 'sqlite' | 'postgres';

/** The few SQL fragments that are spelled differently on the two databases. */
export interface SqlDialect {
  name: Dialect;
  /** True when `needle` occurs in `haystack` (plain substring, no pattern characters). */
  contains(haystack: Expression<string | null>, needle: string): RawBuilder<boolean>;
}

export const sqlDialects: Record<Dialect, SqlDialect> = {
  sqlite: { name: 'sqlite', contains: (h, n) => sql<boolean>`instr(${h}, ${n}) > 0` },
  postgres: { name: 'postgres', contains: (h, n) => sql<boolean>`strpos(${h}, ${n}) > 0` },
};
