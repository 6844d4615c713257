// Secondary indexes built once at the end of a bulk write instead of row by row. Inserting a million findings into
// seven secondary indexes whose keys are random (asset and vulnerability ids) costs a B-tree descent and page writes
// per key; building an index from the finished table is one sort. Measured on both databases (docs/BENCHMARKS.md).
import { availableParallelism } from 'node:os';
import { sql, type Transaction } from 'kysely';
import type { Database } from '../db/tables.js';
import { anyRow } from '../db/statistics.js';
import type { Dialect } from '../types.js';

/** The tables a large import fills; the others are small or keyed by their primary key alone. */
const BULK_TABLES = ['assets', 'vulnerabilities', 'vulnerability_packages', 'vulnerability_aliases', 'risks'] as const;

/** The bulk tables without a row: at the start of a write, the ones it fills from empty (a first import). */
export async function emptyBulkTables(tx: Transaction<Database>): Promise<string[]> {
  const empty: string[] = [];
  for (const table of BULK_TABLES) if ((await anyRow(tx, table)) === 0) empty.push(table);
  return empty;
}

/**
 * The secondary indexes of every bulk table that is empty when the write starts (a first import), dropped by `drop`
 * and built again by `rebuild`; call it last in the same transaction, so that a rollback, a dry run or a crash leaves
 * the schema as it was and no reader ever sees the tables without their indexes (readers of a WAL database see the
 * last commit, which has them). The writer drops them when it hands its first full batch of a kind: a write smaller
 * than a batch keeps them, as building them again costs it more than maintaining them row by row (docs/DESIGN.md
 * §117). Primary keys stay. The unique indexes that key a finding's packages and aliases (0012) are dropped
 * too, since the writer inserts those rows without a conflict clause; `keys` builds them again at once, for a write
 * that is about to replace or delete such rows by key (the same finding twice in one import), so that it looks them
 * up by index rather than by scanning the table.
 *
 * On PostgreSQL only when no other session is connected to the database: `drop index` takes an exclusive lock on the
 * table until the commit, which would stop every read of it (any tenant's) for the whole import. A server that is up
 * keeps its pooled sessions, so an import beside it keeps the indexes; a session that connects during the import waits
 * for its commit, as beside SQLite's rollback journal (docs/DESIGN.md §40, §42).
 */
export function deferIndexes(
  tx: Transaction<Database>,
  dialect: Dialect,
  /** The bulk tables empty at the start of the write (`emptyBulkTables`). */
  empty: readonly string[],
): DeferredIndexes {
  // The statements that build the dropped indexes again: the unique keys apart, as `keys` may build them first.
  const keys: string[] = [];
  const others: string[] = [];
  let dropped: Promise<void> | undefined;
  const drop = async () => {
    // Nothing to defer (every write but a first import, and a dry run): no need to ask who else is connected.
    if (empty.length === 0 || (dialect === 'postgres' && !(await alonePostgres(tx)))) return;
    for (const table of empty) {
      const indexes = await sql<{ name: string; sql: string }>`${
        dialect === 'sqlite'
          ? sql`select name, sql from sqlite_master where type = 'index' and tbl_name = ${table} and sql is not null`
          : // Constraints' indexes (primary keys) stay.
            sql`select i.indexname as name, i.indexdef as sql from pg_indexes as i
            where i.schemaname = current_schema() and i.tablename = ${table}
              and not exists (select 1 from pg_constraint as c where c.conname = i.indexname)`
      } order by 1`.execute(tx);
      for (const index of indexes.rows) {
        await sql`drop index ${sql.id(index.name)}`.execute(tx);
        (/^create unique index /i.test(index.sql) ? keys : others).push(index.sql);
      }
    }
  };
  const build = async (statements: string[]) => {
    if (statements.length === 0) return;
    // SQLite sorts an index's keys on helper threads when allowed to (a finding index of 1M rows: 4.6 → 3.6 s); the
    // import's other threads have finished by now. PostgreSQL has its own parallel index builds.
    if (dialect === 'sqlite') await sql.raw(`pragma threads = ${Math.min(4, availableParallelism())}`).execute(tx);
    try {
      for (const statement of statements) await sql.raw(statement).execute(tx);
    } finally {
      if (dialect === 'sqlite') await sql.raw('pragma threads = 0').execute(tx);
    }
  };
  return {
    drop: () => (dropped ??= drop()),
    keys: () => build(keys.splice(0)),
    rebuild: () => build([...keys.splice(0), ...others.splice(0)]),
  };
}

export interface DeferredIndexes {
  /** Drops the indexes (once; later calls wait for the first): the write is a bulk one. */
  drop: () => Promise<void>;
  /** Builds every dropped index again; the last step of the write. */
  rebuild: () => Promise<void>;
  /** Builds the dropped unique indexes now (at most once): rows are about to be replaced or deleted by key. */
  keys: () => Promise<void>;
}

/**
 * Whether this session is the only client connected to its PostgreSQL database. The server's own workers do not count:
 * an autovacuum worker analysing the tables of an earlier import gives way to the indexes' drop, and counting it made
 * a first import keep its indexes (and a test of this failed) whenever autovacuum happened to be on the database.
 */
async function alonePostgres(tx: Transaction<Database>): Promise<boolean> {
  const { rows } = await sql<{ others: string }>`select count(*) as others from pg_stat_activity
    where datname = current_database() and pid <> pg_backend_pid() and backend_type = 'client backend'`.execute(tx);
  return Number(rows[0]?.others) === 0;
}
