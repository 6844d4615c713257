// A server killed (SIGKILL) between a commit and its delivery (pipeline.md §5): once a scan committed, before its
// changes were sent; and once a batch was formed and fixed, just before it was sent, with more written while the
// server was down. Started again, it delivers everything: the fixed batch first, under its id and with exactly its
// changes, then what came after. Each case has a database of its own, so that their lease waits overlap.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { deliveryId } from '../../src/domain/webhooks.js';
import { fixture } from '../fixtures.js';
import { createKey, openStorageWithKeys, TENANT_A } from '../helpers.js';
import { exitCodeAfter, runCli, spawnServe } from '../http/serve-process.js';
import { died, endedScan, killLeft, uploadReport } from '../http/scan-processes.js';
import { assetRecord, findingRecord, ndjson } from '../records.js';
import { createEndpoint, deduplicated, receivedChanges, scanChanges, startReceiver, waitFor } from './receiver.js';

const ENV = {
  SECINV_WEBHOOK_ALLOW_PRIVATE: 'true',
  SECINV_TEST_WEBHOOK_RETRY_MS: '100',
  // The claim of a killed server lasts three times this.
  SECINV_TEST_WEBHOOK_TIMEOUT_MS: '1000',
};

/**
 * A database with the fixture, keys, a receiver and an endpoint on it; a server started to be killed (`killed`), one
 * started again for `body` and stopped after it (`restarted`); `dispose` removes them all.
 */
async function setting() {
  const { opened, keys } = await openStorageWithKeys(fixture, [TENANT_A]);
  const ingestKey = await createKey(opened.storage, TENANT_A, { scopes: ['ingest'] });
  const dir = mkdtempSync(join(tmpdir(), 'secinv-kill-'));
  const receiver = await startReceiver(dir);
  const hook = await createEndpoint(opened.storage, TENANT_A, receiver.url('hook'));
  await receiver.control('hook', { secret: hook.secret });
  const started: ChildProcess[] = [];
  return {
    opened,
    readKey: keys[0],
    ingestKey,
    dir,
    receiver,
    hook,
    /** A server that kills itself where `env` says: its port, and its death. */
    killed: async (env: Record<string, string>) => {
      const { child, port } = await spawnServe(opened.url, { ...ENV, ...env });
      started.push(child);
      return { base: `http://127.0.0.1:${port}`, dead: died(child) };
    },
    restarted: async (body: (base: string) => Promise<void>) => {
      const again = await spawnServe(opened.url, ENV);
      try {
        await body(`http://127.0.0.1:${again.port}`);
      } finally {
        await exitCodeAfter(again.child, 'SIGTERM');
      }
    },
    dispose: async () => {
      for (const child of started) killLeft(child);
      await receiver.kill();
      await opened.dispose();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

describe.concurrent('a server killed between a commit and its delivery', () => {
  it("killed once a scan committed, before anything was sent: the next start sends the scan's changes", async () => {
    const s = await setting();
    try {
      const first = await s.killed({ SECINV_TEST_SCAN_KILL_AT: 'committed' });
      // The server dies as the scan commits: the upload was answered, the scan is not asked for.
      const upload = await uploadReport(first.base, s.ingestKey, 'kill-commit', 'k1');
      expect(upload.status).toBe(202);
      expect(await first.dead).toBe('SIGKILL');
      await s.restarted(async (base) => {
        const scan = await endedScan(base, s.ingestKey, upload.location!);
        const expected = await scanChanges(base, s.readKey, scan);
        expect(expected.length).toBeGreaterThan(5);
        expect(await receivedChanges(s.receiver, 'hook', expected.length)).toEqual(expected);
        expect(s.receiver.received('hook').every((r) => r.verified)).toBe(true);
      });
    } finally {
      await s.dispose();
    }
  }, 90_000);

  it('killed once a batch was fixed, before it was sent: the next start sends that batch under its id, then the rest', async () => {
    const s = await setting();
    try {
      const from = (await s.opened.storage.getWebhook(s.hook.id))!.position;
      const first = await s.killed({ SECINV_TEST_WEBHOOK_KILL_AT: 'send' });
      const upload = await uploadReport(first.base, s.ingestKey, 'kill-send', 'k2');
      expect(upload.status).toBe(202);
      // The scan is applied and committed, then the server dies as its batch is about to be sent.
      expect(await first.dead).toBe('SIGKILL');
      expect(s.receiver.received('hook')).toEqual([]);
      const pending = (await s.opened.storage.getWebhook(s.hook.id))!.pending!;
      expect(pending).toMatchObject({ failures: 0 });

      // More is written while no server runs: it goes in a later batch, not in the fixed one.
      const file = join(s.dir, 'later.ndjson');
      writeFileSync(file, ndjson([assetRecord('sirn:later'), findingRecord('sirn:later', 'CVE-2026-7777', 'HIGH')]));
      expect((await runCli(['import', '--quiet', '--db', s.opened.url, file])).code).toBe(0);

      await s.restarted(async (base) => {
        const scan = await endedScan(base, s.ingestKey, upload.location!);
        const fixed = await scanChanges(base, s.readKey, scan);
        expect(Number(fixed.at(-1)!.seq)).toBe(pending.through);
        const later = await waitFor('the later batch', () => {
          const { changes } = deduplicated(s.receiver.received('hook'));
          return changes.some((c) => c.assetId === 'sirn:later') ? changes : undefined;
        });
        const [batch] = s.receiver.received('hook');
        expect(batch).toMatchObject({ id: deliveryId(s.hook.id, from, pending.through), verified: true });
        expect(batch!.body!.changes).toEqual(fixed);
        expect(later.slice(0, fixed.length)).toEqual(fixed);
        expect(later.slice(fixed.length).every((c) => c.assetId === 'sirn:later')).toBe(true);
      });
    } finally {
      await s.dispose();
    }
  }, 90_000);
});
