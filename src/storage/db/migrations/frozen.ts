// The shape of a frozen migration: the statements it ran when it was released, per dialect, as text. A migration
// never calls a helper that may change later (column types, index spellings), so migrating an empty database today
// builds exactly the schema that earlier versions built (test/storage/db/migrations/migrations.test.ts checks it).
import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../../types.js';

/** Work that cannot be written down as text, such as a random secret made once per database. */
export type Step = (db: Kysely<unknown>) => Promise<void>;

export type FrozenMigration = Record<Dialect, readonly (string | Step)[]>;

export async function runFrozen(db: Kysely<unknown>, statements: readonly (string | Step)[]): Promise<void> {
  for (const statement of statements) {
    if (typeof statement === 'string') await sql.raw(statement).execute(db);
    else await statement(db);
  }
}
