// A server killed (SIGKILL) while it applies a scan (pipeline.md §2): before the write, inside it before the commit,
// and after the commit. Started again, the scan ends `succeeded`, applied once: the asset holds the report's findings
// once, and a scan committed before the kill is not applied again.
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixture } from '../fixtures.js';
import { createKey, openStorageWithKeys, TENANT_A, type TestStorage } from '../helpers.js';
import { exitCodeAfter, spawnServe } from './serve-process.js';

const REPORT = readFileSync(
  new URL('../fixtures/ingest/trivy/trivy-image-teamdojo-multi-target.json', import.meta.url),
);
/** The report's findings on its one asset. */
const FINDINGS = 5;
const LEASE_S = '5';

let admin: TestStorage;
let key: string;
beforeAll(async () => {
  ({ opened: admin } = await openStorageWithKeys(fixture, []));
  key = await createKey(admin.storage, TENANT_A, { scopes: ['read', 'ingest'] });
}, 60_000);
afterAll(async () => admin.dispose());

const call = async (base: string, path: string, init: RequestInit = {}) => {
  const response = await fetch(`${base}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${key}`, ...(init.headers as Record<string, string> | undefined) },
  });
  return {
    status: response.status,
    location: response.headers.get('location'),
    body: (await response.json()) as { data: Record<string, unknown> },
  };
};

const died = (child: ChildProcess) =>
  new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_code, signal) => resolve(signal)));

describe('a server killed while it applies a scan', () => {
  for (const point of ['claimed', 'settled', 'committed'] as const) {
    it(`at ${point}: the next start applies it once`, async () => {
      const region = `kill-${point}`;
      const first = await spawnServe(admin.url, { SECINV_TEST_SCAN_KILL_AT: point, SECINV_SCAN_LEASE_S: LEASE_S });
      const base = `http://127.0.0.1:${first.port}`;
      const dead = died(first.child);
      // As a CI client sends it: with an Idempotency-Key, so that it can send it again when no answer came.
      const send = (to: string) =>
        call(to, `/v1/tenant/scans?provider=AWS&region=${region}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'idempotency-key': `job-${point}` },
          body: REPORT,
        });
      // Killed as soon as it claims, the server may die before its 202 leaves.
      const upload = await send(base).catch(() => null);
      if (upload !== null) expect(upload.status).toBe(202);
      expect(await dead).toBe('SIGKILL');

      const again = await spawnServe(admin.url, { SECINV_SCAN_LEASE_S: LEASE_S });
      const next = `http://127.0.0.1:${again.port}`;
      try {
        // Sent again: the same scan (200), never a second one.
        const retry = await send(next);
        expect(retry.status).toBe(200);
        if (upload !== null) expect(retry.location).toBe(upload.location);
        let scan: Record<string, unknown>;
        for (;;) {
          scan = (await call(next, retry.location!)).body.data;
          if (scan.status === 'succeeded' || scan.status === 'failed') break;
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
        expect(scan.status).toBe('succeeded');
        const [assetId] = (scan.summary as { assetIds: string[] }).assetIds;
        expect(assetId).toContain(region);
        const findings = await call(next, `/v1/tenant/vulnerabilities?assetIds=${encodeURIComponent(assetId!)}`);
        expect((findings.body as unknown as { meta: { total: number } }).meta.total).toBe(FINDINGS);
        // One application, which added every finding: none ran twice.
        expect((scan.summary as { findings: { added: number } }).findings.added).toBe(FINDINGS);
      } finally {
        await exitCodeAfter(again.child, 'SIGTERM');
      }
    }, 60_000);
  }
});
