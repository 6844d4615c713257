// Scans for the tests, written as `secinv ingest` records them: ended at a time the test sets (finishedAt in the past,
// for retention).
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

/** Writes the scans as given, in one transaction. */
export const recordScans = (storage: Storage, scans: readonly ScanRecord[]): Promise<void> =>
  storage.recordScans(scans);
