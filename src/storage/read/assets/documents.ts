// The served JSON of an asset: its stored document with the derived fields spliced in, and the reads of both.
import type { ExpressionBuilder, Kysely } from 'kysely';
import { fromTenant } from '../../tx/tenant.js';
import type { AssetTable, Database } from '../../db/tables.js';

export const DERIVED_COLUMNS = [
  'n_low',
  'n_medium',
  'n_high',
  'n_critical',
  'vulnerability_score',
  'is_vulnerable',
  'has_kev',
  'has_exploit',
  'is_exploitable',
] as const;
export type DerivedColumns = Pick<AssetTable, (typeof DERIVED_COLUMNS)[number]>;

/**
 * Mapper from a row to the API object's JSON bytes. The stored document lacks the derived fields, which change when
 * findings or exemptions are imported; they are spliced in front of it instead of parsing and re-serialising it.
 */
export function assetJson(row: DerivedColumns, doc: Buffer, rawData?: string): Buffer {
  const derived =
    `{"isVulnerable":${row.is_vulnerable === 1},"numberOfLowVulnerabilities":${row.n_low},` +
    `"numberOfMediumVulnerabilities":${row.n_medium},"numberOfHighVulnerabilities":${row.n_high},` +
    `"numberOfCriticalVulnerabilities":${row.n_critical},"vulnerabilityScore":${row.vulnerability_score},` +
    `"hasKev":${row.has_kev === 1},"hasExploit":${row.has_exploit === 1},"isExploitable":${row.is_exploitable === 1},`;
  // One allocation and two copies: the derived fields are ASCII, so their length in bytes is their length.
  const tail = rawData === undefined ? undefined : `,"rawData":${rawData}}`;
  const body = doc.subarray(1, tail === undefined ? doc.length : doc.length - 1);
  const tailBytes = tail === undefined ? 0 : Buffer.byteLength(tail);
  const out = Buffer.allocUnsafe(derived.length + body.length + tailBytes);
  out.write(derived, 0, 'latin1');
  body.copy(out, derived.length);
  if (tail !== undefined) out.write(tail, derived.length + body.length);
  return out;
}

/**
 * One column of each asset row's documents, read by a scalar subquery on the row's key. Not a join: with a join, SQLite
 * weighs its plans by the bound tenant and id against the STAT4 samples of the tables' indexes, and so prepares the
 * statement again on every run (28 µs more per asset read on 100,000 assets; docs/DESIGN.md §55). Every asset has its
 * documents row (they are written together); a row without one reads null and is treated as missing.
 */
export const documentColumn = <C extends 'doc' | 'raw_data'>(eb: ExpressionBuilder<Database, 'assets'>, column: C) =>
  eb
    .selectFrom('asset_documents')
    .select(`asset_documents.${column}`)
    .whereRef('asset_documents.tenant_id', '=', 'assets.tenant_id')
    .whereRef('asset_documents.asset_id', '=', 'assets.id');

/** The served rows (derived columns and document) of the given assets, by id: a page, or the assets a page embeds. */
export async function assetDocuments(
  db: Kysely<Database>,
  tenantId: string,
  ids: readonly string[],
): Promise<Map<string, DerivedColumns & { id: string; doc: Buffer }>> {
  if (ids.length === 0) return new Map();
  const rows = await fromTenant(db, 'assets', tenantId)
    .select((eb) => ['assets.id', ...DERIVED_COLUMNS, documentColumn(eb, 'doc').as('doc')])
    .where('assets.id', 'in', ids)
    .execute();
  const found = new Map<string, DerivedColumns & { id: string; doc: Buffer }>();
  for (const { doc, ...row } of rows) if (doc !== null) found.set(row.id, { ...row, doc });
  return found;
}

/**
 * The stored documents of the given assets, by id, for rows that carry their derived columns already (a page's or an
 * export batch's, read with their sort keys): no second visit of their asset rows.
 */
export async function storedDocuments(
  db: Kysely<Database>,
  tenantId: string,
  ids: readonly string[],
): Promise<Map<string, Buffer>> {
  if (ids.length === 0) return new Map();
  const rows = await fromTenant(db, 'asset_documents', tenantId)
    .select(['asset_documents.asset_id', 'asset_documents.doc'])
    .where('asset_documents.asset_id', 'in', ids)
    .execute();
  return new Map(rows.map((row) => [row.asset_id, row.doc]));
}
