// The BulkWriter: what an import, an ingest or a scan may do inside the one transaction of a bulk write. It strings
// the pipeline's steps together for each call: read what is stored (stored.ts), compare (compare.ts), write rows
// (buffer.ts → rows/), derive (derive.ts); the run's end (pipeline.ts) settles. Every step that writes reports what
// it touched (touched.ts).
import type { Transaction } from 'kysely';
import type { ChangeCause } from '../../domain/changes.js';
import { appendTo } from '../../lib/collections.js';
import type { ImportKind, RecordsByKind } from '../../domain/records.js';
import { bumpDataVersion, tenantOrganization } from '../accounts/tenants.js';
import { appendChanges, attributeChanges } from '../changes/append.js';
import { changeCaptures } from '../changes/capture.js';
import { sqlDialects } from '../db/dialect.js';
import { dialectOf } from '../db/insert-rows.js';
import { findingsByKey } from '../read/vulnerabilities/items.js';
import type { Database } from '../db/tables.js';
import { rematchVex, replaceVexDocument } from '../derive/vex.js';
import { refreshNextExpiry } from '../derive/expiry.js';
import { fromTenant } from '../tx/tenant.js';
import { takeTenantTurn } from '../tx/turns.js';
import type { ScanRecord } from '../../domain/scans.js';
import type { BulkWriter, ClaimedScan, WaitReason } from '../types.js';
import { recordBuffer } from './buffer.js';
import { recordChecks } from './checks.js';
import { unchangedAsset, unchangedFindings } from './compare.js';
import { deriveTouched } from './derive.js';
import { findingBatchWriter } from './rows/finding-batch.js';
import { inventoryWriters } from './rows/inventory.js';
import { insertScan } from '../scans/records.js';
import { endAppliedScan, openFindings } from './scans.js';
import { resolveFindings, scanReads } from './stored.js';
import { touchedByRun } from './touched.js';

export interface WriterOptions {
  deriveRisksAt?: string | undefined;
  /** Runs before rows of a finding's packages or aliases are replaced or deleted by key (deferred key indexes). */
  beforeReplace?: () => Promise<void>;
  /** Runs before each full batch of a kind is written: the write is a bulk one (deferred indexes). */
  beforeFullBatch?: () => Promise<void>;
  /** Runs once the buffered rows are written, before deriving reads them back (statistics of filled tables). */
  beforeDerive?: () => Promise<void>;
  /** Called when the run waits for another write to a tenant to commit (PostgreSQL). */
  onWait?: ((reason: WaitReason) => void) | undefined;
  /** The queued scan the run applies, which endScan ends. */
  scan?: ClaimedScan | undefined;
  /** Why the run writes, for its changes (an applied or recorded scan names itself). */
  cause?: ChangeCause | undefined;
  /** The write's clock (BulkWriteOptions.clock). */
  clock?: (() => Date) | undefined;
}

/** A bulk write's writer, and the settle step its run ends with. */
export interface WriterRun {
  writer: BulkWriter;
  /** Derives what is left, then bumps the data version of every tenant the run wrote to. */
  settle(): Promise<void>;
}

const scanCause = (scanId: string, keyId: string | null): ChangeCause => ({
  kind: 'scan',
  scanId,
  ...(keyId === null ? {} : { keyId }),
});

/** Captures the records' keys, tenant by tenant. */
async function captureEach<R extends { tenantId: string }>(
  records: readonly R[],
  keyOf: (record: R) => string,
  capture: (tenantId: string, keys: Iterable<string>) => Promise<void>,
): Promise<void> {
  const byTenant = new Map<string, string[]>();
  for (const record of records) appendTo(byTenant, record.tenantId, keyOf(record));
  for (const [tenantId, keys] of byTenant) await capture(tenantId, keys);
}

export function bulkWriter(tx: Transaction<Database>, options: WriterOptions = {}): WriterRun {
  const beforeReplace = options.beforeReplace ?? (() => Promise.resolve());
  /** The tenants this run has taken its turn with. */
  const turns = new Set<string>();
  const touched = touchedByRun();
  // Tenants whose VEX exemptions were re-matched since their last write: deriving need not match them again.
  const vexCurrent = new Set<string>();
  const dialect = dialectOf(tx);
  // The change log's captures: each record's tracked state before the run first writes it (docs/DESIGN.md §100).
  const captures = changeCaptures(tx, dialect);
  let cause: ChangeCause =
    options.cause ??
    (options.scan === undefined ? { kind: 'import' } : scanCause(options.scan.scanId, options.scan.keyId));
  /** Tenants whose exemptions the run wrote, and when it began: their earliest expiry is set again at settle. */
  const exempted = new Set<string>();
  const startedAt = new Date().toISOString();
  /** The scans the run recorded (`secinv ingest`: one per file), whose changes are theirs. */
  const recorded: ScanRecord[] = [];
  const writers = { ...inventoryWriters(tx), vulnerability: findingBatchWriter(tx, beforeReplace) };
  const buffer = recordBuffer(
    {
      ...writers,
      asset: async (records) => {
        await captureEach(records, (r) => r.asset.id, captures.assets);
        await writers.asset(records);
      },
      vulnerability: async (records) => {
        await captureEach(records, (r) => r.vulnerability.assetId, captures.assets);
        await writers.vulnerability(records);
      },
      risk: async (records) => {
        await captureEach(records, (r) => r.risk.id, captures.risks);
        await writers.risk(records);
      },
    },
    options.beforeFullBatch,
  );
  const reads = scanReads(tx);

  const writer: BulkWriter = {
    async write<K extends ImportKind>(kind: K, record: RecordsByKind[K]): Promise<void> {
      const tenantId = (record as { tenantId: string }).tenantId;
      vexCurrent.delete(tenantId);
      if (kind === 'exemption') exempted.add(tenantId);
      if (kind === 'exemption' || kind === 'assetGroup') touched.touch(tenantId);
      else if (kind === 'asset') touched.touch(tenantId, (record as RecordsByKind['asset']).asset.id);
      else if (kind === 'vulnerability')
        touched.touch(tenantId, (record as RecordsByKind['vulnerability']).vulnerability.assetId);
      else if (kind === 'tenant') touched.wrote(tenantId);
      await buffer.add(kind, record);
    },

    async derive() {
      await buffer.flushAll();
      await options.beforeDerive?.();
      return deriveTouched(tx, touched, vexCurrent, options.deriveRisksAt, (tenantId, scope) =>
        scope === 'all' ? captures.tenant(tenantId) : captures.assets(tenantId, scope),
      );
    },

    // What the run holds of the asset was written when its stored state was first read (storedAsset, storedFindings).
    // The packages and aliases are read by their keys, whose indexes a first import builds at its end: now, then.
    async unchangedFindings(tenantId, assetId, records) {
      await beforeReplace();
      return unchangedFindings(tx, tenantId, assetId, records);
    },
    unchangedAsset: (record) => unchangedAsset(tx, record),

    async assetExists(tenantId: string, assetId: string): Promise<boolean> {
      const row = await fromTenant(tx, 'assets', tenantId)
        .select('assets.id')
        .where('assets.id', '=', assetId)
        .executeTakeFirst();
      return row !== undefined;
    },

    async openFindings(tenantId, assetIds) {
      await buffer.flushAll();
      return openFindings(tx, tenantId, assetIds);
    },
    // Exemptions are written straight to the transaction (VEX documents and their matches), never buffered.
    async exemptionIds(tenantId) {
      const rows = await fromTenant(tx, 'exemptions', tenantId).select('exemptions.exemption_id').execute();
      return new Set(rows.map((row) => row.exemption_id));
    },
    endScan: (outcome) => endAppliedScan(tx, options.scan, outcome, new Date().toISOString()),
    recordScan(scan) {
      recorded.push(scan);
      if (recorded.length === 1) cause = scanCause(scan.id, scan.keyId);
      return insertScan(tx, scan);
    },

    // Every run asks for a tenant's organization before it reads or writes anything of that tenant (the ingest for its
    // one tenant, an import for each tenant at its first record): the run takes its turn with the tenant there.
    async tenantOrganization(tenantId: string): Promise<string | undefined> {
      if (!turns.has(tenantId)) {
        turns.add(tenantId);
        await takeTenantTurn(tx, dialect, tenantId, options.onWait);
        const organization = await tenantOrganization(tx, tenantId);
        // A tenant new to the database holds nothing yet: its changes need no captures.
        if (organization === undefined) captures.fresh(tenantId);
        return organization;
      }
      return tenantOrganization(tx, tenantId);
    },

    // A read of an asset's stored state first writes what the run holds of that asset: a second report of the same
    // asset in one run builds on what the first wrote, not on what was stored before the run.
    async storedAsset(tenantId, assetId) {
      await buffer.flushFor('asset', tenantId, assetId);
      return reads.storedAsset(tenantId, assetId);
    },

    resolvedFindings: (tenantId, assetId) => reads.resolvedFindings(tenantId, assetId),

    async storedFindings(tenantId, assetId) {
      await buffer.flushFor('vulnerability', tenantId, assetId);
      return reads.storedFindings(tenantId, assetId);
    },

    async replaceVexDocument(tenantId, document): Promise<void> {
      await replaceVexDocument(tx, tenantId, document);
      vexCurrent.delete(tenantId);
      touched.touch(tenantId);
    },

    async rematchVex(tenantId) {
      // Statements match stored rows: an image asset and the packages of findings still buffered must be written.
      await buffer.flush('asset');
      await buffer.flush('vulnerability');
      const result = await rematchVex(tx, tenantId);
      vexCurrent.add(tenantId);
      if (result.changed) touched.touch(tenantId);
      return result.documents;
    },

    async recordChecks(tenantId, assetId, results) {
      const counts = await recordChecks(tx, tenantId, assetId, results);
      if (counts.added + counts.updated + counts.resolved > 0) touched.touch(tenantId, assetId);
      return counts;
    },

    async resolveFindings(tenantId, assetId, source, keep): Promise<number> {
      // Buffered findings are all in `keep`: writing them first changes nothing this deletes.
      await buffer.flush('vulnerability');
      await captures.assets(tenantId, [assetId]);
      // Each finding leaves with its record as served, which its finding.resolved change keeps.
      const leaving = async (ids: string[]) =>
        captures.leaving(
          tenantId,
          assetId,
          await findingsByKey(
            tx,
            sqlDialects[dialect],
            tenantId,
            ids.map((id) => ({ asset_id: assetId, vulnerability_id: id })),
          ).then((found) => new Map([...found].map(([k, record]) => [k.slice(assetId.length + 1), record.toString()]))),
        );
      const resolved = await resolveFindings(tx, tenantId, assetId, source, keep, beforeReplace, leaving);
      if (resolved > 0) {
        vexCurrent.delete(tenantId);
        touched.touch(tenantId, assetId);
      }
      return resolved;
    },
  };

  return {
    writer,
    async settle() {
      await writer.derive();
      // From the run's start, which is before its derivations matched: an exemption that expired between the two is
      // still due (the runner finds it lifted already), none is missed.
      for (const tenantId of exempted) await refreshNextExpiry(tx, tenantId, startedAt);
      const at = (options.clock ?? (() => new Date()))().toISOString();
      const appended = await appendChanges(tx, captures, { cause, at });
      // The first recorded scan is the cause of the run's changes; each later one takes those on its assets.
      for (const scan of recorded.slice(1)) {
        const run = appended.get(scan.tenantId);
        if (run !== undefined && scan.summary !== null)
          await attributeChanges(tx, scan.tenantId, run, scanCause(scan.id, scan.keyId), scan.summary.assetIds);
      }
      for (const tenantId of new Set([...touched.written(), ...appended.keys()])) await bumpDataVersion(tx, tenantId);
    },
  };
}
