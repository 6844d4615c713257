// Scans as stored and as served (pipeline.md §2): a row of `scans` and the Scan record, the reads of a tenant's
// scans, and the writing of a scan that ended without a queue (`secinv ingest`). Every read runs in the tenant's read
// transaction (on PostgreSQL under row-level security).
import type { Kysely, Selectable } from 'kysely';
import type { Database, ScanTable } from '../db/tables.js';
import type { TenantReader } from '../tx/read.js';
import { writeTransaction } from '../tx/write.js';
import type {
  Dialect,
  ScanListQuery,
  ScanPosition,
  ScanRecord,
  ScanStatus,
  TenantScope,
  WaitReason,
} from '../types.js';

const parsed = <T>(text: string | null): T | null => (text === null ? null : (JSON.parse(text) as T));

export const scanRecord = (row: Selectable<ScanTable>): ScanRecord => ({
  id: row.id,
  tenantId: row.tenant_id,
  status: row.status as ScanStatus,
  name: row.name,
  format: row.format,
  options: JSON.parse(row.options) as Record<string, unknown>,
  sizeBytes: Number(row.size_bytes),
  sha256: row.sha256,
  keyId: row.key_id,
  submittedAt: row.submitted_at,
  startedAt: row.started_at,
  finishedAt: row.finished_at,
  summary: parsed(row.summary),
  gate: parsed(row.gate),
  problems: parsed(row.problems) ?? [],
});

/** The tenant's scans, narrowed to one key's uploads when `keyId` is given (an ingest key without `read`). */
const tenantScans = (db: Kysely<Database>, tenantId: string, keyId: string | undefined) => {
  const all = db.selectFrom('scans').selectAll().where('tenant_id', '=', tenantId);
  return keyId === undefined ? all : all.where('key_id', '=', keyId);
};

export function scanRecordReads(read: TenantReader) {
  return {
    getScan: (scope: TenantScope, id: string, keyId?: string): Promise<ScanRecord | undefined> =>
      read(scope.tenantId, async (db) => {
        const row = await tenantScans(db, scope.tenantId, keyId).where('id', '=', id).executeTakeFirst();
        return row && scanRecord(row);
      }),

    /** Newest first (submittedAt, then id, both descending): `perPage` after `after`, and where the next batch starts. */
    listScans: (
      scope: TenantScope,
      query: ScanListQuery,
      after: ScanPosition | undefined,
      keyId?: string,
    ): Promise<{ items: ScanRecord[]; next: ScanPosition | null }> =>
      read(scope.tenantId, async (db) => {
        let select = tenantScans(db, scope.tenantId, keyId);
        if (query.statuses !== undefined) select = select.where('status', 'in', query.statuses);
        if (query.formats !== undefined) select = select.where('format', 'in', query.formats);
        if (query.submittedAtStart !== undefined) select = select.where('submitted_at', '>=', query.submittedAtStart);
        if (query.submittedAtEnd !== undefined) select = select.where('submitted_at', '<=', query.submittedAtEnd);
        if (after !== undefined)
          select = select.where((eb) =>
            eb.or([
              eb('submitted_at', '<', after.submittedAt),
              eb.and([eb('submitted_at', '=', after.submittedAt), eb('id', '<', after.id)]),
            ]),
          );
        const rows = await select
          .orderBy('submitted_at', 'desc')
          .orderBy('id', 'desc')
          .limit(query.perPage + 1)
          .execute();
        const items = rows.slice(0, query.perPage).map(scanRecord);
        const last = items[items.length - 1];
        return {
          items,
          next: rows.length > query.perPage && last ? { submittedAt: last.submittedAt, id: last.id } : null,
        };
      }),
  };
}

/** A scan applied without a queue (`secinv ingest`), written as it ended. */
export async function insertScan(tx: Kysely<Database>, scan: ScanRecord): Promise<void> {
  await tx
    .insertInto('scans')
    .values({
      tenant_id: scan.tenantId,
      id: scan.id,
      status: scan.status,
      name: scan.name,
      format: scan.format,
      options: JSON.stringify(scan.options),
      size_bytes: scan.sizeBytes,
      sha256: scan.sha256,
      key_id: scan.keyId,
      idempotency_key: null,
      request_hash: null,
      submitted_at: scan.submittedAt,
      started_at: scan.startedAt,
      finished_at: scan.finishedAt,
      summary: scan.summary === null ? null : JSON.stringify(scan.summary),
      gate: scan.gate === null ? null : JSON.stringify(scan.gate),
      problems: JSON.stringify(scan.problems),
    })
    .execute();
}

export function scanRecordWrites(db: Kysely<Database>, dialect: Dialect) {
  return {
    /** Writes scans that ended outside a bulk write (a refused `secinv ingest` run), in one small transaction. */
    recordScans: async (scans: readonly ScanRecord[], onWait?: (reason: WaitReason) => void): Promise<void> => {
      if (scans.length === 0) return;
      await writeTransaction(
        db,
        dialect,
        async (tx) => {
          for (const scan of scans) await insertScan(tx, scan);
        },
        onWait,
      );
    },
  };
}
