// Scans for the tests, written as `secinv ingest` records them: ended at a time the test sets (finishedAt in the past,
// for retention), through a bulk write of the tenant.
import { randomUUID } from 'node:crypto';
import type { ScanRecord, Storage } from '../src/storage/index.js';

/** A scan of the tenant that ended at `finishedAt`, submitted and started a minute before. */
export function endedScan(
  tenantId: string,
  name: string,
  finishedAt: Date,
  status: 'succeeded' | 'failed' = 'succeeded',
): ScanRecord {
  const submittedAt = new Date(finishedAt.getTime() - 60_000).toISOString();
  return {
    id: randomUUID(),
    tenantId,
    status,
    name,
    format: 'trivy',
    options: {},
    sizeBytes: 10,
    sha256: '0'.repeat(64),
    keyId: null,
    submittedAt,
    startedAt: submittedAt,
    finishedAt: finishedAt.toISOString(),
    summary: null,
    gate: null,
    problems: status === 'failed' ? [{ message: 'not a report' }] : [],
  };
}

/** Writes the scans as given, in one bulk write. */
export async function recordScans(storage: Storage, scans: readonly ScanRecord[]): Promise<void> {
  await storage.bulkWrite(
    async (writer) => {
      for (const scan of scans) {
        await writer.tenantOrganization(scan.tenantId);
        await writer.recordScan(scan);
      }
    },
    { dryRun: false },
  );
}
