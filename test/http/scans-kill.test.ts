// A server killed (SIGKILL) at each point of a scan (pipeline.md §2): once it answered 202 and before anything
// claimed the scan, as it claims it, inside the write once the report is read, before the commit, and after it.
// Started again, the scan ends `succeeded`, applied once: the asset holds the report's findings once, one scan row,
// a scan committed before the kill is not applied again, and neither queue entry nor body is left. Each point has a
// database of its own, so that the points run at once and their lease waits overlap.
import { describe, expect, it } from 'vitest';
import { fixture } from '../fixtures.js';
import { createKey, openStorageWithKeys, TENANT_A } from '../helpers.js';
import { exitCodeAfter, spawnServe } from './serve-process.js';
import {
  died,
  endedScan,
  expectAppliedOnce,
  expectNoLeftovers,
  KILL_POINTS,
  killLeft,
  LEASE_S,
  uploadReport,
} from './scan-processes.js';

describe.concurrent('a server killed during a scan', () => {
  for (const point of KILL_POINTS) {
    it(`at ${point}: the next start applies it once`, async () => {
      const { opened } = await openStorageWithKeys(fixture, []);
      const key = await createKey(opened.storage, TENANT_A, { scopes: ['read', 'ingest'] });
      const region = `kill-${point}`;
      const lease = String(LEASE_S);
      const first = await spawnServe(opened.url, { SECINV_TEST_SCAN_KILL_AT: point, SECINV_SCAN_LEASE_S: lease });
      try {
        const dead = died(first.child);
        const send = (port: number) => uploadReport(`http://127.0.0.1:${port}`, key, region, `job-${point}`);
        // The runner is woken once the 202 is out, but its own poll may claim the scan first and die before it leaves.
        const upload = await send(first.port).catch(() => null);
        if (point === 'queued' || upload !== null) expect(upload?.status).toBe(202);
        expect(await dead).toBe('SIGKILL');

        const again = await spawnServe(opened.url, { SECINV_SCAN_LEASE_S: lease });
        const next = `http://127.0.0.1:${again.port}`;
        try {
          // Sent again: the same scan (200), never a second one.
          const retry = await send(again.port);
          expect(retry.status).toBe(200);
          if (upload !== null) expect(retry.location).toBe(upload.location);
          await expectAppliedOnce(next, key, await endedScan(next, key, retry.location!), region);
          await expectNoLeftovers(opened.url);
        } finally {
          await exitCodeAfter(again.child, 'SIGTERM');
        }
      } finally {
        killLeft(first.child);
        await opened.dispose();
      }
    }, 90_000);
  }
});
