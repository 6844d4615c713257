// Whether writing a record again would leave what is stored as it is: the same report ingested twice changes nothing
// (ingest.md §3), so its findings and asset need no write, the run's summary counts them as unchanged, and a run that
// changes nothing does not move the tenant's data version (the ETags its clients hold stay valid). Each comparison is
// against the rows the writer would write, built by the same functions (src/storage/write/rows/findings.ts, asset-rows.ts),
// so a column the write gains is compared too; a difference of any kind (even of key order in a document written by
// another path) counts as a change and the record is written as before.
import { isDeepStrictEqual } from 'node:util';
import type { Kysely, Transaction } from 'kysely';
import { ownIntel } from '../../domain/intel.js';
import type { RecordsByKind, VulnerabilityRecord } from '../../domain/records.js';
import { assetDocumentRow, assetRow } from './rows/assets.js';
import { DERIVED_COLUMNS } from '../read/assets/documents.js';
import {
  findingAliases,
  findingDocumentBytes,
  findingPackages,
  findingRow,
  NOT_THE_RECORDS,
  PACKAGE_COLUMNS,
} from './rows/findings.js';
import { dialectOf } from '../db/insert-rows.js';
import { sqlDialects } from '../db/dialect.js';
import { findingRows } from './stored.js';
import { fromTenant } from '../tx/tenant.js';
import type { Database } from '../db/tables.js';

type Db = Kysely<Database> | Transaction<Database>;

/** Findings compared per statement. */
const CHUNK = 500;

type Row = Record<string, unknown>;

/** The columns of a finding's row that the comparison reads: every column the write sets but NOT_THE_RECORDS. */
let compared: string[] | undefined;

/** Which of one asset's findings about to be written would leave their stored rows and document as they are. */
export async function unchangedFindings(
  db: Db,
  tenantId: string,
  assetId: string,
  records: readonly VulnerabilityRecord[],
): Promise<Set<string>> {
  const unchanged = new Set<string>();
  for (let start = 0; start < records.length; start += CHUNK) {
    const chunk = records.slice(start, start + CHUNK);
    const ids = chunk.map((r) => r.vulnerability.vulnerabilityId);
    const stored = new Map(
      (await findingRows<Row>(db, 'vulnerabilities', tenantId, assetId, ids)).map((r) => [r.vulnerability_id, r]),
    );
    if (stored.size === 0) continue;
    // As text, not as a Buffer each: out of the heap, 200,000 of them took a re-scan's peak RSS 10 MB higher.
    const docs = new Map(
      (
        await fromTenant(db, 'vulnerability_documents', tenantId)
          .select(['finding_id', sqlDialects[dialectOf(db)].document('doc').as('doc')])
          .where(
            'vulnerability_documents.finding_id',
            'in',
            [...stored.values()].map((r) => Number(r.id)),
          )
          .execute()
      ).map((r) => [Number(r.finding_id), r.doc]),
    );
    const packages = grouped(await findingRows<Row>(db, 'vulnerability_packages', tenantId, assetId, ids));
    const aliases = grouped(await findingRows<Row>(db, 'vulnerability_aliases', tenantId, assetId, ids));
    for (const record of chunk) {
      const id = record.vulnerability.vulnerabilityId;
      const row = stored.get(id);
      if (row === undefined) continue;
      const doc = docs.get(Number(row.id));
      const written = findingRow(record, record.vulnerability, ownIntel(record.vulnerability), 0, []) as Row;
      compared ??= Object.keys(written).filter((column) => !NOT_THE_RECORDS.has(column));
      const same =
        compared.every((column) => row[column] === written[column]) &&
        doc !== undefined &&
        findingDocumentBytes(record).toString() === doc &&
        samePackages(findingPackages(record), packages.get(id) ?? []) &&
        isDeepStrictEqual(findingAliases(record).sort(), (aliases.get(id) ?? []).map((a) => a.alias).sort());
      if (same) unchanged.add(id);
    }
  }
  return unchanged;
}

const grouped = (rows: Row[]): Map<unknown, Row[]> => {
  const out = new Map<unknown, Row[]>();
  for (const row of rows) {
    const list = out.get(row.vulnerability_id);
    if (list === undefined) out.set(row.vulnerability_id, [row]);
    else list.push(row);
  }
  return out;
};

/** Where a package row's position is, and its columns after the finding's key (tenant, asset, vulnerability). */
const POSITION = PACKAGE_COLUMNS.indexOf('position');
const PACKAGE_VALUES = PACKAGE_COLUMNS.slice(POSITION);

/** The packages' rows the write would insert (in PACKAGE_COLUMNS' order) against the stored ones, position by position. */
function samePackages(written: unknown[][], stored: Row[]): boolean {
  if (written.length !== stored.length) return false;
  const byPosition = new Map(stored.map((r) => [Number(r.position), r]));
  return written.every((row) => {
    const found = byPosition.get(row[POSITION] as number);
    return found !== undefined && PACKAGE_VALUES.every((column, i) => found[column] === row[POSITION + i]);
  });
}

/** Whether writing the asset again would leave its stored row (but the derived columns) and documents as they are. */
export async function unchangedAsset(db: Db, record: RecordsByKind['asset']): Promise<boolean> {
  const stored = (await fromTenant(db as Kysely<Database>, 'assets', record.tenantId)
    .innerJoin('asset_documents', (join) =>
      join
        .onRef('asset_documents.tenant_id', '=', 'assets.tenant_id')
        .onRef('asset_documents.asset_id', '=', 'assets.id'),
    )
    .selectAll(['assets', 'asset_documents'])
    .where('assets.id', '=', record.asset.id)
    .executeTakeFirst()) as Row | undefined;
  if (stored === undefined) return false;
  const derived = new Set<string>(DERIVED_COLUMNS);
  const row = Object.entries(assetRow(record)).every(
    ([column, value]) => derived.has(column) || stored[column] === value,
  );
  const { doc, raw_data, meta_search } = assetDocumentRow(record);
  return (
    row &&
    Buffer.from(doc as Uint8Array).equals(stored.doc as Buffer) &&
    raw_data === stored.raw_data &&
    meta_search === stored.meta_search
  );
}
