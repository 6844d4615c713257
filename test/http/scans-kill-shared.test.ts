// Two `secinv serve` processes on one PostgreSQL database (pipeline.md §2): one killed (SIGKILL) at any point of a
// scan uploaded to it leaves the scan to the other, which is never restarted, once the lease ran out, with nothing of
// it half-written; and scans uploaded to both at once are each applied once, a tenant's one at a time. Each point has
// a database of its own, so that the points run at once and their lease waits overlap.
import type { ChildProcess } from 'node:child_process';
import type { Kysely } from 'kysely';
import { describe, expect, it } from 'vitest';
import { connect } from '../../src/storage/db/connect.js';
import type { Database } from '../../src/storage/db/tables.js';
import { fixture, uuidFor } from '../fixtures.js';
import { createKey, importRecords, openStorageWithKeys, TENANT_A, TEST_DIALECT, type TestStorage } from '../helpers.js';
import { tenantRecord } from '../records.js';
import { exitCodeAfter, spawnServe } from './serve-process.js';
import {
  died,
  endedScan,
  expectAppliedOnce,
  expectNoLeftovers,
  FINDINGS,
  KILL_POINTS,
  killLeft,
  LEASE_S,
  scanEvents,
  uploadReport,
  type ScanEvent,
} from './scan-processes.js';

/** The concurrent uploads: tenants, and scans per tenant, sent half to one server and half to the other. */
const BUSY_TENANTS = 4;
const SCANS_PER_TENANT = 5;
const SERVER_ENV = { SECINV_SCAN_LEASE_S: String(LEASE_S), SECINV_LOG_LEVEL: 'info' };

interface Server {
  child: ChildProcess;
  base: string;
  /** The scan events it logged. */
  events: ScanEvent[];
}

const serve = async (url: string, env: Record<string, string> = {}): Promise<Server> => {
  const { child, port } = await spawnServe(url, { ...SERVER_ENV, ...env });
  return { child, base: `http://127.0.0.1:${port}`, events: scanEvents(child) };
};

const millis = (from: string | null | undefined, to: string | null | undefined) => Date.parse(to!) - Date.parse(from!);

/** A tenant's scans and assets as stored, read past every server. */
async function stored(raw: Kysely<Database>, tenantId: string) {
  const scans = await raw.selectFrom('scans').selectAll().where('tenant_id', '=', tenantId).execute();
  const count = async (table: 'assets' | 'vulnerabilities') =>
    Number(
      (
        await raw
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('tenant_id', '=', tenantId)
          .executeTakeFirstOrThrow()
      ).n,
    );
  return { scans, assets: await count('assets'), findings: await count('vulnerabilities') };
}

/** A database of its own with a raw connection to it, both closed after `body`, and the servers it started. */
async function onDatabase(body: (admin: TestStorage, raw: Kysely<Database>, servers: Server[]) => Promise<void>) {
  const { opened } = await openStorageWithKeys(fixture, []);
  const { db: raw } = await connect(opened.url);
  const servers: Server[] = [];
  try {
    await body(opened, raw, servers);
  } finally {
    for (const { child } of servers) {
      if (child.exitCode === null && child.signalCode === null) await exitCodeAfter(child, 'SIGTERM');
      killLeft(child);
    }
    await raw.destroy();
    await opened.dispose();
  }
}

describe.skipIf(TEST_DIALECT !== 'postgres')('two servers on one PostgreSQL database', () => {
  describe.concurrent('one killed during a scan uploaded to it', () => {
    for (const point of KILL_POINTS) {
      it(
        `at ${point}: the other takes it within the lease and applies it once`,
        async () =>
          onDatabase(async (admin, raw, servers) => {
            const key = await createKey(admin.storage, TENANT_A, { scopes: ['read', 'ingest'] });
            const region = `shared-${point}`;
            const [other, killed] = await Promise.all([
              serve(admin.url),
              serve(admin.url, { SECINV_TEST_SCAN_KILL_AT: point }),
            ]);
            servers.push(other, killed);
            const baseline = await stored(raw, TENANT_A);
            // The other server is held still (SIGSTOP) until the killed one died: its poll would now and then claim
            // the upload first, and the killed server would then never reach its point.
            other.child.kill('SIGSTOP');
            let upload;
            let left;
            let resumedAt = 0;
            try {
              const dead = died(killed.child);
              // Its runner is woken once the 202 is out, but its own poll may claim the scan first and die before.
              upload = await uploadReport(killed.base, key, region, `job-${point}`).catch(() => null);
              expect(await dead).toBe('SIGKILL');
              left = await stored(raw, TENANT_A);
            } finally {
              other.child.kill('SIGCONT');
              resumedAt = Date.now();
            }
            if (point === 'queued' || upload !== null) expect(upload?.status).toBe(202);
            const added = left.scans.find((row) => !baseline.scans.some((old) => old.id === row.id));
            // As the killed server left it: queued, claimed with nothing of it written, or (committed) applied.
            expect({
              scans: left.scans.length - baseline.scans.length,
              status: added?.status,
              assets: left.assets - baseline.assets,
              findings: left.findings - baseline.findings,
            }).toEqual({
              scans: 1,
              status: { queued: 'queued', committed: 'succeeded' }[point as string] ?? 'running',
              assets: point === 'committed' ? 1 : 0,
              findings: point === 'committed' ? FINDINGS : 0,
            });
            const before = added!;

            const scan = await endedScan(other.base, key, `/v1/tenant/scans/${before.id}`);
            await expectAppliedOnce(other.base, key, scan, region);
            // The other server applied it, once; but the scan committed before the kill, which it left alone.
            expect(other.events.filter((event) => event.scanId === before.id).map((event) => event.status)).toEqual(
              point === 'committed' ? [] : ['succeeded'],
            );
            if (point === 'queued') {
              // Never claimed: taken at the other's next look once it runs again, without waiting for a lease.
              expect(before.started_at).toBeNull();
              expect(Date.parse(scan.startedAt!) - resumedAt).toBeLessThan(LEASE_S * 1000);
            } else if (point !== 'committed') {
              // Taken again once the dead server's claim ran out, and soon after.
              const waited = millis(before.started_at, scan.startedAt);
              expect(waited).toBeGreaterThanOrEqual(LEASE_S * 1000);
              expect(waited).toBeLessThan((LEASE_S + 5) * 1000);
            }
            await expectNoLeftovers(admin.url);
          }),
        90_000,
      );
    }
  });

  it(
    'scans uploaded to both servers at once are each applied once, a tenant at a time',
    async () =>
      onDatabase(async (admin, raw, servers) => {
        servers.push(...(await Promise.all([serve(admin.url), serve(admin.url)])));
        const tenants = await Promise.all(
          Array.from({ length: BUSY_TENANTS }, async (_, t) => {
            const tenantId = uuidFor(`scans-kill-shared-${t}`);
            expect((await importRecords(admin.storage, [tenantRecord(tenantId)])).problems).toEqual([]);
            return { tenantId, key: await createKey(admin.storage, tenantId, { scopes: ['read', 'ingest'] }) };
          }),
        );
        const jobs = tenants.flatMap(({ tenantId, key }, t) =>
          Array.from({ length: SCANS_PER_TENANT }, (_, s) => ({
            tenantId,
            key,
            region: `busy-${t}-${s}`,
            to: servers[(t + s) % 2]!,
          })),
        );
        const uploads = await Promise.all(
          jobs.map((job) => uploadReport(job.to.base, job.key, job.region, job.region)),
        );
        expect(uploads.map((upload) => upload.status)).toEqual(jobs.map(() => 202));
        const scans = await Promise.all(jobs.map((job, i) => endedScan(job.to.base, job.key, uploads[i]!.location!)));
        for (const [i, job] of jobs.entries()) await expectAppliedOnce(job.to.base, job.key, scans[i]!, job.region);

        // Each scan claimed and ended once, by one of the two, and both took part.
        const ids = scans.map((scan) => scan.id as string).sort();
        const events = servers.flatMap((server) => server.events);
        expect(events.map((event) => event.scanId).sort()).toEqual(ids);
        expect(events.every((event) => event.status === 'succeeded')).toBe(true);
        for (const server of servers) expect(server.events.length).toBeGreaterThan(0);

        for (const { tenantId } of tenants) {
          const { scans: rows, assets, findings } = await stored(raw, tenantId);
          expect({ scans: rows.length, assets, findings }).toEqual({
            scans: SCANS_PER_TENANT,
            assets: SCANS_PER_TENANT,
            findings: SCANS_PER_TENANT * FINDINGS,
          });
          // A tenant's scans one at a time: each started after the one before it ended.
          const spans = rows
            .map((row) => [Date.parse(row.started_at!), Date.parse(row.finished_at!)] as const)
            .sort((a, b) => a[0] - b[0]);
          for (const [j, [start, end]] of spans.entries()) {
            expect(end).toBeGreaterThanOrEqual(start);
            if (j > 0) expect(start).toBeGreaterThanOrEqual(spans[j - 1]![1]);
          }
        }
        await expectNoLeftovers(admin.url);
      }),
    90_000,
  );
});
