// SQLite: how an asset count that the kept columns cannot answer yet (the first of a data version, as after a restart)
// reads the assets. With two filters or more, SQLite's planner walks the index of one of them and looks up every
// matching row to test the others: `providers=AWS&severityLevels=CRITICAL,HIGH` over 100,000 assets visited 45,000 rows
// in index order, 0.30 s warm and 0.82 s with a cold cache, where one pass over the table in its own order took 0.04 s.
// The pass reads every tenant's rows, though, so it is the better plan only when the tenant holds most of the table; a
// small tenant beside a large one is counted as the planner chooses. docs/DESIGN.md §81.
import { CompiledQuery, sql, type Kysely, type SelectQueryBuilder } from 'kysely';
import { countable } from './counts.js';
import type { AssetFilters } from './filters.js';
import type { Database } from '../../db/tables.js';

const FROM = 'from "assets"';

/** Filters set: with one, the planner counts the entries of its index without reading a row. */
const filtersSet = (filters: AssetFilters): number => Object.values(filters).filter((v) => v !== undefined).length;

/** Rows of the table sampled to estimate a tenant's share of it: ±9% at a half, where both plans cost about the same. */
const PROBES = 64;

/**
 * Whether the tenant holds at least half of the assets table, kept per tenant and data version. Estimated from the rows
 * at PROBES evenly spaced rowids up to the largest (one step down the table's tree each), not counted: a count of the
 * tenant's index entries read 20 MB of index into the cache for 100,000 assets (0.10 s after a restart). A rowid with no
 * row (a deleted asset) counts as another tenant's, so gaps only make the share look smaller and leave the count to
 * the planner.
 */
export function tenantShare() {
  const kept = new Map<string, { version: number; most: boolean }>();
  return async (db: Kysely<Database>, tenantId: string, version: number): Promise<boolean> => {
    const entry = kept.get(tenantId);
    if (entry !== undefined && entry.version === version) return entry.most;
    const { rows } = await sql<{ top: number | null }>`select max(rowid) as "top" from assets`.execute(db);
    const top = rows[0]?.top ?? null;
    let most = false;
    if (top !== null && top > 0) {
      const probes = [...new Set(Array.from({ length: PROBES }, (_, i) => Math.ceil(((i + 1) * top) / PROBES)))];
      const { rows: hit } = await sql<{ n: number }>`
        select count(*) as "n" from assets where rowid in (${sql.join(probes)}) and tenant_id = ${tenantId}`.execute(
        db,
      );
      most = (hit[0]?.n ?? 0) * 2 >= probes.length;
    }
    kept.set(tenantId, { version, most });
    return most;
  };
}

/**
 * The count's statement rewritten to read the table in one pass, when that may be the better plan: the filters are
 * several kept-column filters (docs/DESIGN.md §35: attributes that each match a large part of the assets; an `ids` list
 * or a text search stays as the planner reads it) and the statement reads the table once. Undefined otherwise.
 */
export function scanStatement(text: string, filters: AssetFilters): string | undefined {
  const parts = text.split(FROM);
  if (parts.length !== 2 || !countable(filters) || filtersSet(filters) < 2) return undefined;
  return parts.join(`${FROM} not indexed`);
}

/**
 * Runs `query`, a count of the assets table under `filters` (on SQLite): in one pass over the table when
 * `scanStatement` allows it and the tenant holds most of the table (`most`); otherwise as the planner chooses.
 */
export async function countAssets(
  db: Kysely<Database>,
  query: SelectQueryBuilder<Database, 'assets', { n: number | string }>,
  filters: AssetFilters,
  most: () => Promise<boolean>,
): Promise<number> {
  const compiled = query.compile();
  const scanned = scanStatement(compiled.sql, filters);
  const text = scanned !== undefined && (await most()) ? scanned : compiled.sql;
  const { rows } = await db.executeQuery<{ n: number | string }>(CompiledQuery.raw(text, [...compiled.parameters]));
  return Number(rows[0]?.n ?? 0);
}
