// Two `secinv serve` processes on one PostgreSQL database (pipeline.md §5): both dispatchers look for work, and each
// batch is sent by one of them: every endpoint receives each webhook-id once, and every change once, in log order.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fixture } from '../fixtures.js';
import { createKey, openStorageWithKeys, TENANT_A, TEST_DIALECT } from '../helpers.js';
import { exitCodeAfter, spawnServe } from '../http/serve-process.js';
import { killLeft } from '../http/scan-processes.js';
import type { Change } from '../changes.js';
import { createEndpoint, receivedChanges, scanChanges, startReceiver, uploadScan } from './receiver.js';

const ENV = { SECINV_WEBHOOK_ALLOW_PRIVATE: 'true' };
const ENDPOINTS = ['one', 'two', 'three', 'four'];

describe.skipIf(TEST_DIALECT !== 'postgres')('two servers on one PostgreSQL database', () => {
  it('send each batch once: every webhook-id and every change arrives once per endpoint', async () => {
    const { opened, keys } = await openStorageWithKeys(fixture, [TENANT_A]);
    const ingestKey = await createKey(opened.storage, TENANT_A, { scopes: ['ingest'] });
    const dir = mkdtempSync(join(tmpdir(), 'secinv-shared-'));
    const receiver = await startReceiver(dir);
    const servers = await Promise.all([spawnServe(opened.url, ENV), spawnServe(opened.url, ENV)]);
    try {
      for (const name of ENDPOINTS) {
        const { secret } = await createEndpoint(opened.storage, TENANT_A, receiver.url(name));
        await receiver.control(name, { secret });
      }
      const bases = servers.map((s) => `http://127.0.0.1:${s.port}`);
      const expected: Change[] = [];
      for (let i = 0; i < 4; i += 1) {
        const base = bases[i % 2]!;
        const scan = await uploadScan(base, ingestKey, `shared-${i}`);
        expected.push(...(await scanChanges(base, keys[0], scan)));
      }
      for (const name of ENDPOINTS) {
        expect(await receivedChanges(receiver, name, expected.length)).toEqual(expected);
        const received = receiver.received(name);
        expect(received.every((r) => r.verified && r.answered === 200)).toBe(true);
        const ids = received.map((r) => r.id);
        expect(new Set(ids).size).toBe(ids.length);
        const changes = received.flatMap((r) => r.body?.changes ?? []);
        expect(changes.map((c) => c.seq)).toEqual(expected.map((c) => c.seq));
      }
    } finally {
      await Promise.all(servers.map((s) => exitCodeAfter(s.child, 'SIGTERM')));
      for (const s of servers) killLeft(s.child);
      await receiver.kill();
      await opened.dispose();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);
});
