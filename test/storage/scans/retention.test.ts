// Retention of ended scans on each database: the scans that ended before the cutoff are deleted, in batches of one
// statement each, every tenant's; queued, running and younger ones stay; pruning twice, or on PostgreSQL from two
// connections at once, deletes each once and fails nothing.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ScanRecord, Storage } from '../../../src/storage/index.js';
import { openStorage } from '../../../src/storage/index.js';
import { openTestStorage, TENANT_A, TENANT_B, TEST_DIALECTS } from '../../helpers.js';
import { endedScan as ended, recordScans } from '../../scans.js';

const DAY = 24 * 60 * 60 * 1000;
const NOW = Date.parse('2026-06-01T12:00:00.000Z');
const daysAgo = (days: number) => new Date(NOW - days * DAY).toISOString();
const CUTOFF = daysAgo(400);

const endedScan = (tenantId: string, name: string, days: number, status: 'succeeded' | 'failed'): ScanRecord =>
  ended(tenantId, name, new Date(NOW - days * DAY), status);

const names = async (storage: Storage, tenantId: string): Promise<string[]> =>
  (await storage.listScans({ tenantId, dataVersion: 0 }, { perPage: 100 }, undefined)).items
    .map((scan) => scan.name ?? '')
    .sort();

describe.each(TEST_DIALECTS)('scan retention on %s', (dialect) => {
  it('deletes the ended scans older than the cutoff, of every tenant, a batch per statement', async () => {
    const opened = await openTestStorage(dialect, { withFixture: true });
    const statements: string[] = [];
    const counted = await openStorage(opened.url, { onQuery: (sql) => void statements.push(sql) });
    try {
      const { storage } = opened;
      await recordScans(storage, [
        ...[401, 402, 500, 800].map((days) => endedScan(TENANT_A, `old-${days}`, days, 'succeeded')),
        endedScan(TENANT_A, 'old-failed', 450, 'failed'),
        endedScan(TENANT_A, 'young', 399, 'succeeded'),
        endedScan(TENANT_B, 'old-b', 420, 'failed'),
      ]);
      // Queued long ago and not ended yet: never deleted, whatever its age.
      const queued = await storage.acceptScan(
        {
          id: randomUUID(),
          tenantId: TENANT_A,
          name: 'queued',
          options: {},
          keyId: null,
          idempotencyKey: null,
          submittedAt: daysAgo(900),
        },
        (async function* () {
          yield Buffer.from('{}');
        })(),
        () => ({ sizeBytes: 2, sha256: '0'.repeat(64), requestHash: 'h' }),
      );
      expect(queued.kind).toBe('created');

      expect(await counted.pruneScans(CUTOFF, { batch: 2 })).toBe(6);
      // Tenant A's five in batches of 2 (2, 2, 1), tenant B's one.
      expect(statements.filter((sql) => /^delete from "scans"/.test(sql))).toHaveLength(4);
      expect(await names(storage, TENANT_A)).toEqual(['queued', 'young']);
      expect(await names(storage, TENANT_B)).toEqual([]);

      // Again: nothing left to delete, nothing fails; the queued scan is still there to be applied.
      expect(await counted.pruneScans(CUTOFF)).toBe(0);
      const claim = await storage.claimScan('test', new Date(NOW), 60_000);
      expect(claim?.name).toBe('queued');
    } finally {
      await counted.close();
      await opened.dispose();
    }
  });

  // Two servers of one PostgreSQL database (SQLite's connections of one thread would wait on each other's lock).
  it.runIf(dialect === 'postgres')('two connections pruning at once delete each once, and neither fails', async () => {
    const opened = await openTestStorage(dialect, { withFixture: true });
    const other = await openStorage(opened.url);
    try {
      const old = Array.from({ length: 60 }, (_, i) => endedScan(TENANT_A, `old-${i}`, 401 + i, 'succeeded'));
      await recordScans(opened.storage, [...old, endedScan(TENANT_A, 'young', 10, 'failed')]);
      const [a, b] = await Promise.all([
        opened.storage.pruneScans(CUTOFF, { batch: 5 }),
        other.pruneScans(CUTOFF, { batch: 5 }),
      ]);
      expect(a + b).toBe(old.length);
      expect(await names(opened.storage, TENANT_A)).toEqual(['young']);
    } finally {
      await other.close();
      await opened.dispose();
    }
  });

  it('stops between two batches when told to', async () => {
    const opened = await openTestStorage(dialect, { withFixture: true });
    try {
      await recordScans(
        opened.storage,
        Array.from({ length: 5 }, (_, i) => endedScan(TENANT_A, `old-${i}`, 401 + i, 'succeeded')),
      );
      let batches = 0;
      const stopped = () => batches++ >= 1;
      expect(await opened.storage.pruneScans(CUTOFF, { batch: 2, stopped })).toBe(2);
      expect(await names(opened.storage, TENANT_A)).toHaveLength(3);
    } finally {
      await opened.dispose();
    }
  });
});
