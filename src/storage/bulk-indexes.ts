// Secondary indexes built once at the end of a bulk write instead of row by row. Inserting a million findings into
// seven secondary indexes whose keys are random (asset and vulnerability ids) costs a B-tree descent and page writes
// per key; building an index from the finished table is one sort. Measured on SQLite (docs/BENCHMARKS.md, "Import").
import { sql, type Transaction } from 'kysely';
import type { Database } from './tables.js';
import type { Dialect } from './types.js';

/** The tables a large import fills; the others are small or keyed by their primary key alone. */
const BULK_TABLES = ['assets', 'vulnerabilities', 'vulnerability_packages', 'vulnerability_aliases', 'risks'] as const;

/**
 * Drops the secondary indexes of every bulk table that is empty when the write starts (a first import) and returns
 * the step that builds them again; call it last in the same transaction, so that a rollback, a dry run or a crash
 * leaves the schema as it was and no reader ever sees the tables without their indexes (readers of a WAL database see
 * the last commit, which has them). Primary keys stay: every lookup an import makes is by key.
 *
 * SQLite only. On PostgreSQL `drop index` takes an exclusive lock on the table until the commit, which would stop
 * every API read of the table (any tenant's) for the whole import; it keeps its indexes.
 */
export async function deferIndexes(tx: Transaction<Database>, dialect: Dialect): Promise<() => Promise<void>> {
  const dropped: string[] = [];
  if (dialect === 'sqlite') {
    for (const table of BULK_TABLES) {
      const { rows } = await sql`select 1 from ${sql.table(table)} limit 1`.execute(tx);
      if (rows.length > 0) continue;
      const indexes = await sql<{ name: string; sql: string }>`
        select name, sql from sqlite_master where type = 'index' and tbl_name = ${table} and sql is not null
        order by name`.execute(tx);
      for (const index of indexes.rows) {
        await sql`drop index ${sql.id(index.name)}`.execute(tx);
        dropped.push(index.sql);
      }
    }
  }
  return async () => {
    for (const statement of dropped) await sql.raw(statement).execute(tx);
  };
}
