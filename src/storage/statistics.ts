// Planner statistics after a bulk write (an import, an ingest, a risk derivation). ANALYZE reads every index of the
// tables it is given: run over the whole database after every ingest, it took 3.4 of the 3.5 s that an 8-finding Trivy
// report took to ingest into a 1M-finding SQLite database (docs/DESIGN.md §47). Statistics say how many rows a table
// has and how they spread over each index's leading columns; a write that moves a table's rows by less than a tenth
// does not change a plan. So a table is analysed again only when it has rows and no statistics, or its row count has
// moved by more than a tenth since its statistics were taken: the share PostgreSQL's own autoanalyze waits for
// (autovacuum_analyze_scale_factor). Counting rows costs far less than analysing them (~90 ms for every table of the
// 1M-finding database, against 3.4 s).
import { sql, type Kysely } from 'kysely';
import type { Database } from './tables.js';
import type { Dialect } from './types.js';

/** The share of a table's analysed rows by which its row count must move for its statistics to be taken again. */
export const STALE_SHARE = 0.1;

/** Whether statistics taken at `analyzed` rows (undefined: never taken) are stale for a table of `rows` rows. */
export const statisticsStale = (analyzed: number | undefined, rows: number): boolean =>
  analyzed === undefined ? rows > 0 : Math.abs(rows - analyzed) > STALE_SHARE * Math.max(analyzed, 1);

/**
 * Tables whose statistics follow another's: a finding's document is read by the finding's id alone, so only its row
 * count matters, and that is the findings' (one document per finding). Not counted (on SQLite the documents are one
 * B-tree without an index, and counting them reads every page: 0.4 s for 1M); analysed with the findings.
 */
const FOLLOWERS: Readonly<Record<string, string>> = { vulnerability_documents: 'vulnerabilities' };

/** SQLite's own tables and the migrator's are not the inventory's. */
const inventoryTable = (name: string): boolean => !/^(sqlite|kysely)_/.test(name);

/**
 * Every table of the inventory, with the rows it had when its statistics were taken (undefined: it has none), from
 * one read of the catalog.
 */
async function tableStatistics(db: Kysely<Database>, dialect: Dialect): Promise<Map<string, number | undefined>> {
  if (dialect === 'sqlite') {
    const names = (await sql<{ name: string }>`select name from sqlite_master where type = 'table'`.execute(db)).rows;
    // Every row of a table's statistics starts with the table's row count.
    const stats = names.some((t) => t.name === 'sqlite_stat1')
      ? (await sql<{ tbl: string; stat: string }>`select tbl, stat from sqlite_stat1`.execute(db)).rows
      : [];
    const analyzed = new Map(stats.map((r) => [r.tbl, Number.parseInt(r.stat, 10)]));
    return new Map(names.filter((t) => inventoryTable(t.name)).map((t) => [t.name, analyzed.get(t.name)]));
  }
  // reltuples is what the planner takes the row count to be. CREATE INDEX sets it too, without statistics of the
  // columns (a first import builds its deferred indexes at its end, into tables the migrations analysed empty): a
  // table counts as analysed only once it has column statistics, which an ANALYZE of it with rows leaves.
  const { rows } = await sql<{ name: string; analyzed: number | null }>`
    select c.relname as name, case when c.reltuples >= 0 and exists (select 1 from pg_stats as s
        where s.schemaname = n.nspname and s.tablename = c.relname) then c.reltuples::float8 end as analyzed
      from pg_class as c join pg_namespace as n on n.oid = c.relnamespace
    where n.nspname = current_schema() and c.relkind in ('r', 'p')`.execute(db);
  return new Map(
    rows
      .filter((r) => inventoryTable(r.name))
      .map((r) => [r.name, r.analyzed === null ? undefined : Number(r.analyzed)]),
  );
}

/** The rows each table had when its statistics were taken; a table missing from the map has none. */
export async function analyzedRows(db: Kysely<Database>, dialect: Dialect): Promise<Map<string, number>> {
  const analyzed = new Map<string, number>();
  for (const [name, rows] of await tableStatistics(db, dialect)) if (rows !== undefined) analyzed.set(name, rows);
  return analyzed;
}

/**
 * Analyses the tables whose statistics are stale (all of them, or those of `only`); returns their names. On
 * PostgreSQL `vacuum (analyze)` also marks the new rows all-visible, which index-only scans need.
 */
export async function refreshStatistics(
  db: Kysely<Database>,
  dialect: Dialect,
  only?: readonly string[],
): Promise<string[]> {
  const tables = await tableStatistics(db, dialect);
  const names = [...tables.keys()].filter((name) => only === undefined || only.includes(name)).sort();
  const stale: string[] = [];
  for (const name of names) {
    if (name in FOLLOWERS) continue;
    const { rows } = await sql<{ n: number | string }>`select count(*) as n from ${sql.table(name)}`.execute(db);
    if (statisticsStale(tables.get(name), Number(rows[0]?.n ?? 0))) stale.push(name);
  }
  for (const [follower, leader] of Object.entries(FOLLOWERS))
    if (stale.includes(leader) && names.includes(follower)) stale.push(follower);
  if (stale.length === 0) return [];
  if (dialect === 'sqlite') for (const name of stale) await sql`analyze ${sql.table(name)}`.execute(db);
  else await sql`vacuum (analyze) ${sql.join(stale.map((name) => sql.table(name)))}`.execute(db);
  return stale;
}
