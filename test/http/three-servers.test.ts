// Three `secinv serve` processes on one PostgreSQL database as one service (docs/SCALING.md): a client of the test's
// own sends its requests round robin to them (pages of every list, and scan uploads with an Idempotency-Key, as CI
// jobs send them), one process is killed (SIGKILL) under that load, and the others carry on: every request that was
// not in flight on the killed one is answered, an upload whose answer was lost with it is sent again to another and
// makes no second scan, and every scan is applied once. Meanwhile a dismissal expires, reopened once by whichever
// process notices first, and an endpoint receives the tenant's whole log through the three dispatchers: each change
// once after deduplication by webhook-id, in log order (a batch the killed process had sent but not recorded may come
// again, under its id and with the same changes).
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { derivedRiskId } from '../../src/domain/risk-engine.js';
import type { Change, ChangePage } from '../changes.js';
import { A1, fixture, uuidFor } from '../fixtures.js';
import { createKey, importRecords, openStorageWithKeys, TENANT_A, TEST_DIALECT } from '../helpers.js';
import { tenantRecord } from '../records.js';
import { createEndpoint, deduplicated, startReceiver, waitFor, type Receiver } from '../webhooks/receiver.js';
import { exitCodeAfter, spawnServe } from './serve-process.js';
import {
  died,
  endedScan,
  expectAppliedOnce,
  expectNoLeftovers,
  killLeft,
  LEASE_S,
  scanEvents,
  uploadReport,
  type ScanEvent,
} from './scan-processes.js';

interface Server {
  name: string;
  child: ChildProcess;
  base: string;
  events: ScanEvent[];
}

const READS = [
  '/v1/tenant/assets?perPage=5',
  '/v1/tenant/assets?sortBy=name&providers=AWS',
  '/v1/tenant/vulnerabilities?perPage=50',
  '/v1/tenant/vulnerabilities?severityLevels=CRITICAL,HIGH&sortBy=firstObservedAt',
  '/v1/tenant/risks?perPage=10',
  '/v1/tenant/changes?perPage=100',
  '/v1/tenant/scans?perPage=10',
];
const TENANTS = 3;
const SCANS_PER_TENANT = 4;
const RISK = derivedRiskId(TENANT_A, 'secinv.exposed-kev-vulnerability', A1);

/** Tenant A's whole change log, page after page. */
async function wholeLog(base: string, key: string): Promise<Change[]> {
  const changes: Change[] = [];
  for (let cursor = ''; ;) {
    const response = await fetch(`${base}/v1/tenant/changes?perPage=1000${cursor && `&cursor=${cursor}`}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(response.status).toBe(200);
    const page = (await response.json()) as ChangePage;
    if (page.data.length === 0) return changes;
    changes.push(...page.data);
    cursor = encodeURIComponent(page.meta.cursor);
  }
}

describe.skipIf(TEST_DIALECT !== 'postgres')('three servers on one PostgreSQL database', () => {
  it('answer as one service through a process killed under load', async () => {
    const { opened } = await openStorageWithKeys(fixture, []);
    const servers: Server[] = [];
    const dir = mkdtempSync(join(tmpdir(), 'secinv-three-'));
    let receiver: Receiver | undefined;
    try {
      expect(await opened.storage.deriveRisks(TENANT_A, new Date().toISOString())).toBeDefined();
      receiver = await startReceiver(dir);
      const hook = await createEndpoint(opened.storage, TENANT_A, receiver.url('all'));
      await receiver.control('all', { secret: hook.secret });
      const from = (await opened.storage.getWebhook(hook.id))!.position;
      const tenants = await Promise.all(
        Array.from({ length: TENANTS }, async (_, t) => {
          const tenantId = t === 0 ? TENANT_A : uuidFor(`three-servers-${t}`);
          if (t > 0) expect((await importRecords(opened.storage, [tenantRecord(tenantId)])).problems).toEqual([]);
          return { tenantId, key: await createKey(opened.storage, tenantId, { scopes: ['read', 'ingest'] }) };
        }),
      );
      servers.push(
        ...(await Promise.all(
          ['one', 'two', 'three'].map(async (name) => {
            const env = {
              SECINV_SCAN_LEASE_S: String(LEASE_S),
              SECINV_LOG_LEVEL: 'info',
              SECINV_WEBHOOK_ALLOW_PRIVATE: 'true',
              SECINV_EXPIRY_INTERVAL_SECONDS: '1',
            };
            const { child, port } = await spawnServe(opened.url, env);
            return { name, child, base: `http://127.0.0.1:${port}`, events: scanEvents(child) };
          }),
        )),
      );
      // Due a few seconds into the load: around the kill, whichever process runs its expiry first reopens it.
      const until = new Date(Date.now() + 3000).toISOString();
      const dismissedAt = new Date().toISOString();
      expect(
        await opened.storage.setRiskLifecycle(TENANT_A, RISK, 'DISMISSED_ACCEPTED', dismissedAt, undefined, until),
      ).toBe(true);
      const victim = servers[1]!;
      const live = new Set(servers);
      let turn = 0;
      /** The next live server, round robin. */
      const next = (): Server => {
        const order = servers.filter((server) => live.has(server));
        return order[turn++ % order.length]!;
      };
      /** What each request got: the server it went to and its status, or the error that ended it. */
      const answered: { server: Server; url: string; status: number | string }[] = [];
      const send = async (url: string, key: string): Promise<void> => {
        const server = next();
        const status = await fetch(`${server.base}${url}`, { headers: { authorization: `Bearer ${key}` } }).then(
          async (response) => (await response.arrayBuffer(), response.status),
          (error: Error) => error.message,
        );
        answered.push({ server, url, status });
      };
      /** A CI job: upload, and send the same upload again to another server when no answer came. */
      const job = async (key: string, region: string) => {
        for (;;) {
          const server = next();
          const upload = await uploadReport(server.base, key, region, `job-${region}`).catch(() => null);
          if (upload !== null) {
            expect(upload.status).toBe(202);
            return { region, key, location: upload.location! };
          }
          expect(server).toBe(victim);
        }
      };

      // The load: readers in a loop, and the uploads spread over the run; the victim is killed in the middle.
      let reading = true;
      const readers = Array.from({ length: 8 }, async (_, r) => {
        for (let i = 0; reading; i += 1) await send(READS[(r + i) % READS.length]!, tenants[r % TENANTS]!.key);
      });
      const jobs = tenants.flatMap(({ key }, t) =>
        Array.from({ length: SCANS_PER_TENANT }, (_, s) => ({ key, region: `three-${t}-${s}` })),
      );
      const first = await Promise.all(jobs.slice(0, jobs.length / 2).map((j) => job(j.key, j.region)));
      // However loaded the machine, the victim has answered reads before it is killed.
      while (!answered.some((a) => a.server === victim && a.status === 200))
        await new Promise((resolve) => setTimeout(resolve, 50));
      const dead = died(victim.child);
      victim.child.kill('SIGKILL');
      expect(await dead).toBe('SIGKILL');
      live.delete(victim);
      const killedAt = answered.length;
      const second = await Promise.all(jobs.slice(jobs.length / 2).map((j) => job(j.key, j.region)));
      // Reads go on after the kill until the two left have answered a good many of them, however loaded the machine.
      while (answered.slice(killedAt).filter((a) => a.status === 200).length < 40)
        await new Promise((resolve) => setTimeout(resolve, 50));
      reading = false;
      await Promise.all(readers);

      // Every request to a live server was answered 200; those the victim held when it died may have failed.
      const failed = answered.filter((a) => a.status !== 200);
      expect(failed.filter((a) => a.server !== victim)).toEqual([]);
      // The victim served before it was killed, and the others after.
      expect(answered.slice(0, killedAt).some((a) => a.server === victim && a.status === 200)).toBe(true);
      expect(answered.slice(killedAt).filter((a) => a.status === 200).length).toBeGreaterThanOrEqual(40);

      // Every scan applied once, the victim's own taken by another once its lease ran out.
      const survivor = servers[0]!;
      for (const { key, region, location } of [...first, ...second]) {
        const scan = await endedScan(survivor.base, key, location);
        await expectAppliedOnce(survivor.base, key, scan, region);
      }
      const ended = servers
        .filter((server) => server !== victim)
        .flatMap((server) => server.events.map((event) => event.scanId));
      expect(new Set(ended).size).toBe(ended.length);
      await expectNoLeftovers(opened.url);

      // The dismissal reopened once, by expiry.
      const readKey = tenants[0]!.key;
      await waitFor('the dismissal to expire', async () => {
        const log = await wholeLog(survivor.base, readKey);
        return log.some((c) => c.type === 'risk.reopened') ? true : undefined;
      });
      // The log after the endpoint's creation, received once each after deduplication, in order.
      const log = (await wholeLog(survivor.base, readKey)).filter((c) => Number(c.seq) > from);
      expect(log.filter((c) => c.type === 'risk.reopened').map((c) => [c.riskId, c.cause.kind])).toEqual([
        [RISK, 'expiry'],
      ]);
      const got = await waitFor(
        'the whole log at the endpoint',
        () => {
          const received = receiver!.received('all');
          return deduplicated(received).changes.length >= log.length ? received : undefined;
        },
        60_000,
      );
      // A change's record is served as it is at the read (pipeline.md §4): the rest must be the log's.
      const withoutRecord = (changes: Change[]) => changes.map(({ record: _, ...change }) => change);
      expect(withoutRecord(deduplicated(got).changes)).toEqual(withoutRecord(log));
      expect(got.every((r) => r.verified)).toBe(true);
      // A webhook-id received twice (sent by the killed process, then by another) carried the same changes; their
      // records are as served at each send (a dismissal that expired between the two reads differently).
      const bodies = new Map<string, string>();
      for (const r of got) {
        const body = JSON.stringify(withoutRecord(r.body?.changes ?? []));
        expect(bodies.get(r.id!) ?? body).toBe(body);
        bodies.set(r.id!, body);
      }
    } finally {
      for (const { child } of servers) {
        if (child.exitCode === null && child.signalCode === null) await exitCodeAfter(child, 'SIGTERM');
        killLeft(child);
      }
      await receiver?.kill();
      await opened.dispose();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
