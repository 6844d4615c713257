// Planner statistics after a bulk write (an import, an ingest, a feed load, a risk derivation). ANALYZE reads every
// index of the tables it is given: run over the whole database after every ingest, it took 3.4 of the 3.5 s that an
// 8-finding Trivy report took to ingest into a 1M-finding SQLite database (docs/DESIGN.md §47). Statistics say how many
// rows a table has and how they spread over each index's leading columns; a write that moves a table's rows by less
// than a tenth does not change a plan. So a table is analysed again only when it has rows and no statistics, or its row
// count has moved by more than a tenth since its statistics were taken: the share PostgreSQL's own autoanalyze waits
// for (autovacuum_analyze_scale_factor). Which tables those are is decided inside the writing transaction, before its
// commit (`staleTables`), and they are analysed after it (`analyzeTables`). The decision is made on counted rows
// (~90 ms for every table of the 1M-finding SQLite database). On PostgreSQL, where counting read 0.3–0.9 s of a
// 1M-finding database after every 8-finding ingest, its statistics counters screen first: a table they show within
// half the share is not counted (docs/DESIGN.md §68).
import { sql, type Kysely } from 'kysely';
import type { Database } from './tables.js';
import type { Dialect } from '../types.js';

/** The share of a table's analysed rows by which its row count must move for its statistics to be taken again. */
export const STALE_SHARE = 0.1;

/** Whether statistics taken at `analyzed` rows (undefined: never taken) are stale for a table of `rows` rows. */
export const statisticsStale = (analyzed: number | undefined, rows: number, share = STALE_SHARE): boolean =>
  analyzed === undefined ? rows > 0 : Math.abs(rows - analyzed) > share * Math.max(analyzed, 1);

/**
 * Tables whose statistics follow another's: a finding's document is read by the finding's id alone, so only its row
 * count matters, and that is the findings' (one document per finding). Not counted (on SQLite the documents are one
 * B-tree without an index, and counting them reads every page: 0.4 s for 1M); analysed with the findings.
 */
const FOLLOWERS: Readonly<Record<string, string>> = { vulnerability_documents: 'vulnerabilities' };

/** SQLite's own tables and the migrator's are not the inventory's. */
const inventoryTable = (name: string): boolean => !/^(sqlite|kysely)_/.test(name);

interface TableRows {
  /** The rows when its statistics were taken; undefined when it has none. */
  analyzed: number | undefined;
  /**
   * About its rows now (PostgreSQL): the live rows of the commits the statistics system has been told of, plus this
   * transaction's inserts less its deletes. A session reports its commits within about a second, and one reported
   * after a VACUUM that already counted them is added again, so this is a screen, never the decision. Undefined on
   * SQLite, which keeps no such counter.
   */
  rows: number | undefined;
}

/**
 * Every table of the inventory, with the rows it had when its statistics were taken and, on PostgreSQL, the rows it
 * has now, from one read of the catalog.
 */
async function tableStatistics(db: Kysely<Database>, dialect: Dialect): Promise<Map<string, TableRows>> {
  if (dialect === 'sqlite') {
    const names = (await sql<{ name: string }>`select name from sqlite_master where type = 'table'`.execute(db)).rows;
    // Every row of a table's statistics starts with the table's row count.
    const stats = names.some((t) => t.name === 'sqlite_stat1')
      ? (await sql<{ tbl: string; stat: string }>`select tbl, stat from sqlite_stat1`.execute(db)).rows
      : [];
    const analyzed = new Map(stats.map((r) => [r.tbl, Number.parseInt(r.stat, 10)]));
    return new Map(
      names
        .filter((t) => inventoryTable(t.name))
        .map((t) => [t.name, { analyzed: analyzed.get(t.name), rows: undefined }]),
    );
  }
  // reltuples is what the planner takes the row count to be. CREATE INDEX sets it too, without statistics of the
  // columns (a first import builds its deferred indexes at its end, into tables the migrations analysed empty): a
  // table counts as analysed only once it has column statistics, which an ANALYZE of it with rows leaves.
  const { rows } = await sql<{ name: string; analyzed: number | null; rows: number | string }>`
    select c.relname as name, case when c.reltuples >= 0 and exists (select 1 from pg_stats as s
        where s.schemaname = n.nspname and s.tablename = c.relname) then c.reltuples::float8 end as analyzed,
      coalesce(l.n_live_tup, 0) + coalesce(x.n_tup_ins, 0) - coalesce(x.n_tup_del, 0) as rows
      from pg_class as c join pg_namespace as n on n.oid = c.relnamespace
        left join pg_stat_user_tables as l on l.relid = c.oid
        left join pg_stat_xact_user_tables as x on x.relid = c.oid
    where n.nspname = current_schema() and c.relkind in ('r', 'p')`.execute(db);
  return new Map(
    rows
      .filter((r) => inventoryTable(r.name))
      .map((r) => [r.name, { analyzed: r.analyzed === null ? undefined : Number(r.analyzed), rows: Number(r.rows) }]),
  );
}

/** The rows each table had when its statistics were taken; a table missing from the map has none. */
export async function analyzedRows(db: Kysely<Database>, dialect: Dialect): Promise<Map<string, number>> {
  const analyzed = new Map<string, number>();
  for (const [name, { analyzed: rows }] of await tableStatistics(db, dialect))
    if (rows !== undefined) analyzed.set(name, rows);
  return analyzed;
}

const countRows = async (db: Kysely<Database>, table: string): Promise<number> =>
  Number(
    (await sql<{ n: number | string }>`select count(*) as n from ${sql.table(table)}`.execute(db)).rows[0]?.n ?? 0,
  );

/**
 * 1 when the table has a row, else 0: a table without statistics is stale once it has one, which a count would read
 * all of its rows (a first import's) to tell.
 */
export const anyRow = async (db: Kysely<Database>, table: string): Promise<number> =>
  (await sql`select 1 as one from ${sql.table(table)} limit 1`.execute(db)).rows.length;

/**
 * The tables whose statistics are stale (of all, or of `only`), as the transaction `db` sees them. A writer asks this
 * inside its transaction, before the commit, where PostgreSQL's counters include its own writes at once. Writes that
 * other sessions committed in the last second or so may not be in them yet: a table they alone moved past the share
 * is analysed by the next write (and by autoanalyze).
 */
export async function staleTables(
  db: Kysely<Database>,
  dialect: Dialect,
  only?: readonly string[],
  /**
   * Tables known to be stale, whatever their counts say, and not counted: those `analyzeFilled` analysed inside the
   * transaction, those already waiting for their statistics (BulkWriteOptions.staleStatistics).
   */
  known: readonly string[] = [],
): Promise<string[]> {
  const tables = await tableStatistics(db, dialect);
  const names = [...tables.keys()].filter((name) => only === undefined || only.includes(name)).sort();
  const stale: string[] = [];
  for (const name of names) {
    if (name in FOLLOWERS) continue;
    if (known.includes(name)) {
      stale.push(name);
      continue;
    }
    const { analyzed, rows } = tables.get(name)!;
    // PostgreSQL's counter screens: a table it shows within half the share of its analysed rows is not counted.
    if (rows !== undefined && analyzed !== undefined && !statisticsStale(analyzed, rows, STALE_SHARE / 2)) continue;
    const now = analyzed === undefined ? await anyRow(db, name) : await countRows(db, name);
    if (statisticsStale(analyzed, now)) stale.push(name);
  }
  for (const [follower, leader] of Object.entries(FOLLOWERS))
    if (stale.includes(leader) && names.includes(follower)) stale.push(follower);
  return stale;
}

/**
 * Analyses the given tables, outside any transaction. On PostgreSQL `vacuum (analyze)` also marks the new rows
 * all-visible, which index-only scans need, and sets the live-row counter exactly.
 */
export async function analyzeTables(db: Kysely<Database>, dialect: Dialect, names: readonly string[]): Promise<void> {
  if (names.length === 0) return;
  if (dialect === 'sqlite') for (const name of names) await sql`analyze ${sql.table(name)}`.execute(db);
  else await sql`vacuum (analyze) ${sql.join(names.map((name) => sql.table(name)))}`.execute(db);
}

/**
 * PostgreSQL: analyses, inside the writing transaction, the tables it filled from empty (`empty`, read at its start),
 * before it reads them back; returns those it analysed. Until then the planner takes them to be as the migrations
 * left them, empty, and on a first import of 1M findings it read all of the tenant's findings for each batch of 500
 * assets whose derived fields it settled (400 ms a batch, 79 s in all; docs/DESIGN.md §69). ANALYZE samples the
 * transaction's own rows. They are analysed again, and vacuumed, after the commit, as every table a write filled.
 */
export async function analyzeFilled(
  tx: Kysely<Database>,
  dialect: Dialect,
  empty: readonly string[],
): Promise<string[]> {
  if (dialect !== 'postgres') return [];
  const filled: string[] = [];
  for (const table of empty) {
    if ((await anyRow(tx, table)) === 0) continue;
    await sql`analyze ${sql.table(table)}`.execute(tx);
    filled.push(table);
  }
  return filled;
}
