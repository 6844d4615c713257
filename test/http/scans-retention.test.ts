// A real `secinv serve` deletes, at its start, the scans that ended longer ago than SECINV_SCAN_RETENTION_DAYS, and
// keeps the younger ones (the deletion itself, in batches and beside other servers: test/storage/scans/).
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixture } from '../fixtures.js';
import { openStorageWithKeys, TENANT_A, type TestStorage } from '../helpers.js';
import { endedScan, recordScans } from '../scans.js';
import { exitCodeAfter, spawnServe } from './serve-process.js';

const DAY = 24 * 60 * 60 * 1000;
const daysAgo = (days: number) => new Date(Date.now() - days * DAY);

let admin: TestStorage;
let readKey: string;
let server: ChildProcess | undefined;
beforeAll(async () => {
  ({
    opened: admin,
    keys: [readKey],
  } = await openStorageWithKeys(fixture, [TENANT_A]));
  await recordScans(admin.storage, [
    endedScan(TENANT_A, 'three-days', daysAgo(3)),
    endedScan(TENANT_A, 'one-day', daysAgo(1)),
  ]);
});
afterAll(async () => {
  if (server?.exitCode === null) await exitCodeAfter(server, 'SIGTERM');
  await admin.dispose();
});

describe('scan retention on secinv serve', () => {
  it('deletes at start the scans that ended before the retention, and keeps the others', async () => {
    const names = async (base: string): Promise<string[]> => {
      const res = await fetch(`${base}/v1/tenant/scans`, { headers: { authorization: `Bearer ${readKey}` } });
      expect(res.status).toBe(200);
      return ((await res.json()) as { data: { name: string }[] }).data.map((scan) => scan.name);
    };
    const { child, port } = await spawnServe(admin.url, { SECINV_SCAN_RETENTION_DAYS: '2' });
    server = child;
    const base = `http://127.0.0.1:${port}`;
    await expect.poll(() => names(base), { timeout: 20_000, interval: 100 }).toEqual(['one-day']);
  });
});
