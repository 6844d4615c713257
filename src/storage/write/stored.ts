// What a scanner ingest asks of the database inside its transaction: the stored asset it updates, the findings the
// same scanner reported before (to keep their firstObservedAt), and resolving those the new scan no longer reports.
import { sql, type Kysely, type Transaction } from 'kysely';
import type { StoredAsset } from '../../domain/records.js';
import { fromTenant } from '../tx/tenant.js';
import type { Database } from '../db/tables.js';
import { dialectOf } from '../db/insert-rows.js';
import { keyProbe } from '../read/vulnerabilities/documents.js';
import type { BulkWriter, StoredFindingTimes } from '../types.js';

type Db = Kysely<Database> | Transaction<Database>;

/** The stored findings of an asset read per statement, and the distinct (first seen, scanner) pairs shared. */
const STORED_PAGE = 5000;
const SHARED_PAIRS = 1000;

/**
 * The rows of `table` (the findings or their packages or aliases) for one asset's findings `ids`, with `columns` (all
 * when not given). On PostgreSQL, one key probe per id: a plain `in (…)` list is planned from the table's statistics,
 * which during a first ingest (or one that grows an asset far past them) say the asset has a few rows, and the list then
 * became a filter over every finding of the asset: 83 ms per batch of 800 on a 200,000-finding image, quadratic over
 * the run (docs/DESIGN.md §43). A lateral probe cannot be turned into a scan (its fence: keyProbe).
 */
export async function findingRows<R>(
  db: Db,
  table: 'vulnerabilities' | 'vulnerability_packages' | 'vulnerability_aliases',
  tenantId: string,
  assetId: string,
  ids: readonly string[],
  columns?: readonly string[],
): Promise<R[]> {
  const selected = columns === undefined ? sql.raw('t.*') : sql.join(columns.map((c) => sql.ref(`t.${c}`)));
  const { rows } =
    dialectOf(db) === 'sqlite'
      ? await sql<R>`select ${selected} from ${sql.table(table)} as t
          where t.tenant_id = ${tenantId} and t.asset_id = ${assetId} and t.vulnerability_id in (${sql.join(ids)})`.execute(
          db,
        )
      : await sql<R>`select ${selected} from unnest(cast(${ids} as text[])) as i(id)
          cross join lateral (select * from ${sql.table(table)} as p
            where p.tenant_id = ${tenantId} and p.asset_id = ${assetId} and p.vulnerability_id = i.id ${keyProbe('p')}) as t`.execute(
          db,
        );
  return rows;
}

/** Which of `ids` one asset already has (see findingRows). */
export const existingFindings = (
  db: Db,
  tenantId: string,
  assetId: string,
  ids: string[],
): Promise<ExistingFinding[]> =>
  findingRows<ExistingFinding>(db, 'vulnerabilities', tenantId, assetId, ids, ['asset_id', 'vulnerability_id', 'id']);

/** A stored finding's key and integer id. */
export interface ExistingFinding {
  asset_id: string;
  vulnerability_id: string;
  id: number;
}

/**
 * `count` integer ids for new findings, unused by any finding (docs/DESIGN.md §45). On SQLite, past the largest: the
 * transaction is the database's only writer, and the ids are taken and written by the same batch. On PostgreSQL, from
 * the column's sequence, which concurrent writers share.
 */
export async function newFindingIds(db: Db, count: number): Promise<number[]> {
  if (count === 0) return [];
  if (dialectOf(db) === 'sqlite') {
    const { rows } = await sql<{ top: number }>`select coalesce(max(id), 0) as top from vulnerabilities`.execute(db);
    const top = rows[0]?.top ?? 0;
    return Array.from({ length: count }, (_, i) => top + i + 1);
  }
  // The sequence is looked up once, behind `offset 0`: flattened into the select list, pg_get_serial_sequence ran for
  // every id and took 8 of every 9 parts of the statement (200,000 ids: 395 → 50 ms; docs/DESIGN.md §70).
  const { rows } = await sql<{ id: number }>`select nextval(s.seq) as id
    from (select pg_get_serial_sequence('vulnerabilities', 'id')::regclass as seq offset 0) as s
      cross join generate_series(1, ${count}) order by id`.execute(db);
  return rows.map((r) => r.id);
}

export const scanReads = (db: Db): Pick<BulkWriter, 'storedAsset' | 'storedFindings' | 'resolvedFindings'> => ({
  async resolvedFindings(tenantId, assetId) {
    const rows = await fromTenant(db, 'resolved_findings', tenantId)
      .select(['vulnerability_id', 'first_observed_at'])
      .where('resolved_findings.asset_id', '=', assetId)
      .execute();
    return new Map(rows.map((r) => [r.vulnerability_id, r.first_observed_at]));
  },

  async storedAsset(tenantId, assetId) {
    const row = await fromTenant(db as Kysely<Database>, 'asset_documents', tenantId)
      .select(['doc', 'raw_data'])
      .where('asset_documents.asset_id', '=', assetId)
      .executeTakeFirst();
    if (!row) return undefined;
    return {
      asset: JSON.parse(Buffer.from(row.doc).toString('utf8')) as StoredAsset,
      rawData: JSON.parse(row.raw_data) as Record<string, unknown>,
    };
  },

  // A page at a time, in key order, and each distinct (first seen, last seen, scanner) triple as one object: the
  // findings of a scan share a handful of them, and a re-scan of a 200,000-finding image held every row, with its own
  // copies of the strings, besides the map (docs/BENCHMARKS.md, "Ingest").
  async storedFindings(tenantId, assetId) {
    const found = new Map<string, StoredFindingTimes>();
    const shared = new Map<string, StoredFindingTimes>();
    for (let after: string | null = null; ;) {
      let page = fromTenant(db, 'vulnerabilities', tenantId)
        .select(['vulnerability_id', 'first_observed_at', 'last_observed_at', 'source'])
        .where('vulnerabilities.asset_id', '=', assetId);
      if (after !== null) page = page.where('vulnerabilities.vulnerability_id', '>', after);
      const rows = await page.orderBy('vulnerabilities.vulnerability_id').limit(STORED_PAGE).execute();
      for (const r of rows) {
        // A null scanner (an imported finding) apart from any name; a time never holds U+0000.
        const times = `${r.first_observed_at}\u0000${r.last_observed_at}`;
        const key = r.source === null ? `-${times}` : `+${r.source}\u0000${times}`;
        let stored = shared.get(key);
        if (stored === undefined) {
          stored = { firstObservedAt: r.first_observed_at, lastObservedAt: r.last_observed_at, source: r.source };
          // Findings imported with times of their own share nothing: then the map stops growing.
          if (shared.size < SHARED_PAIRS) shared.set(key, stored);
        }
        found.set(r.vulnerability_id, stored);
      }
      const last = rows[rows.length - 1];
      if (last === undefined || rows.length < STORED_PAGE) return found;
      after = last.vulnerability_id;
    }
  },
});

/**
 * Deletes the asset's findings from `source` that are not in `keep`, with their documents, packages, aliases and
 * exemption matches.
 */
export async function resolveFindings(
  db: Db,
  tenantId: string,
  assetId: string,
  source: string,
  keep: ReadonlySet<string>,
  beforeDelete: () => Promise<void> = () => Promise.resolve(),
  /** Told each batch of findings about to leave (their vulnerability ids), before they are deleted. */
  leaving: (vulnerabilityIds: string[]) => Promise<void> = () => Promise.resolve(),
): Promise<number> {
  // The ids alone first, from the primary key's index: the source is in the wide row, and reading every row of an
  // asset to find that the new scan keeps them all took 0.6 s for 50,000 findings. Only the ids the scan no longer
  // lists are read whole, for their source.
  const unlisted = (
    await fromTenant(db, 'vulnerabilities', tenantId)
      .select('vulnerability_id')
      .where('vulnerabilities.asset_id', '=', assetId)
      .execute()
  )
    .map((r) => r.vulnerability_id)
    .filter((id) => !keep.has(id));
  // Each stale finding's id too: its document is keyed by it (docs/DESIGN.md §45).
  const stale: { vulnerability_id: string; id: number }[] = [];
  for (let i = 0; i < unlisted.length; i += 500) {
    const rows = await fromTenant(db, 'vulnerabilities', tenantId)
      .select(['vulnerability_id', 'id'])
      .where('vulnerabilities.asset_id', '=', assetId)
      .where('vulnerabilities.vulnerability_id', 'in', unlisted.slice(i, i + 500))
      .where('vulnerabilities.source', '=', source)
      .execute();
    stale.push(...rows);
  }
  if (stale.length > 0) await beforeDelete();
  for (let i = 0; i < stale.length; i += 500) {
    const batch = stale.slice(i, i + 500);
    await leaving(batch.map((f) => f.vulnerability_id));
    const findingIds = batch.map((f) => f.id);
    await db
      .deleteFrom('vulnerability_documents')
      .where('tenant_id', '=', tenantId)
      .where('finding_id', 'in', findingIds)
      .execute();
    await deleteFindingRows(
      db,
      ['vulnerability_packages', 'vulnerability_aliases', 'vulnerability_exemptions', 'vulnerabilities'],
      tenantId,
      assetId,
      batch.map((f) => f.vulnerability_id),
    );
  }
  return stale.length;
}

/**
 * Deletes the rows of some of an asset's findings from the given tables: one statement per table, an index range of
 * the primary key (a row-value IN list is a scan on PostgreSQL).
 */
export async function deleteFindingRows(
  db: Db,
  tables: readonly (
    'vulnerability_packages' | 'vulnerability_aliases' | 'vulnerability_exemptions' | 'vulnerabilities'
  )[],
  tenantId: string,
  assetId: string,
  vulnerabilityIds: string[],
): Promise<void> {
  for (const table of tables) {
    await db
      .deleteFrom(table)
      .where('tenant_id', '=', tenantId)
      .where('asset_id', '=', assetId)
      .where('vulnerability_id', 'in', vulnerabilityIds)
      .execute();
  }
}
