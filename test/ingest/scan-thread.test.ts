// The server's scan thread when its database cannot be opened at its start (a PostgreSQL port that refuses, as during
// a restart): it says so and tries again, with longer waits, until it can; then it applies what is queued. The port
// starts answering when the test opens a loopback forwarder on it to the machine's cluster. Stopped while it waits,
// the thread ends at once.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createConnection, createServer, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { startScanThread } from '../../src/ingest/scan-thread.js';
import type { ScanEvent } from '../../src/ingest/scan-runner.js';
import { openStorage } from '../../src/storage/index.js';
import { createTestDatabase, freePort, steadyPort, TENANT_A, TEST_DIALECTS } from '../helpers.js';

const REPORT = readFileSync(
  new URL('../fixtures/ingest/trivy/trivy-image-teamdojo-multi-target.json', import.meta.url),
);
const HOUR_MS = 60 * 60 * 1000;

/** The URL with another port. */
const onPort = (url: string, port: number): string => {
  const moved = new URL(url);
  moved.port = String(port);
  return moved.href;
};

/** Forwards each connection to `port` on loopback to the URL's own port, until closed. */
async function forwarder(port: number, to: string): Promise<{ close: () => Promise<void> }> {
  const target = new URL(to);
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    const upstream = createConnection(Number(target.port), target.hostname);
    for (const s of [socket, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined);
    }
    socket.pipe(upstream).pipe(socket);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A scan thread on `url`, its events, and a promise for the first event that `match` accepts. */
function thread(url: string) {
  const events: ScanEvent[] = [];
  const waiting: { match: (event: ScanEvent) => boolean; resolve: (event: ScanEvent) => void }[] = [];
  const scans = startScanThread({
    databaseUrl: url,
    leaseMs: 30_000,
    pollMs: 200,
    retentionMs: 400 * 24 * HOUR_MS,
    changesRetentionMs: 400 * 24 * HOUR_MS,
    pruneEveryMs: HOUR_MS,
    expiryEveryMs: HOUR_MS,
    onEvent: (event) => {
      events.push(event);
      for (const w of waiting.filter((w) => w.match(event))) w.resolve(event);
    },
  });
  const seen = (match: (event: ScanEvent) => boolean): Promise<ScanEvent> =>
    new Promise((resolve) => {
      const found = events.find(match);
      if (found) resolve(found);
      else waiting.push({ match, resolve });
    });
  return { scans, events, seen };
}

describe.runIf(TEST_DIALECTS.includes('postgres'))('the scan thread on a database it cannot open yet', () => {
  it('says so, tries again with longer waits, then applies the scan queued once the database answers', async () => {
    const database = await createTestDatabase('postgres', { withFixture: true });
    // Listened on later: a port the kernel does not hand out meanwhile.
    const port = await steadyPort();
    const { scans, events, seen } = thread(onPort(database.url, port));
    let forwarding: { close: () => Promise<void> } | undefined;
    try {
      await seen((event) => event.message?.includes('trying again in 2 s') === true);
      const failures = events.filter((event) => event.status === 'error');
      expect(failures.map((event) => /trying again in (\d+) s$/.exec(event.message ?? '')?.[1])).toEqual(['1', '2']);
      expect(failures[0]!.message).toContain(`127.0.0.1:${port}`);

      forwarding = await forwarder(port, database.url);
      const storage = await openStorage(database.url);
      try {
        const id = randomUUID();
        const queued = await storage.acceptScan(
          {
            id,
            tenantId: TENANT_A,
            name: 'after-the-wait',
            options: { provider: 'AWS', region: 'us-east-1' },
            keyId: null,
            idempotencyKey: null,
            submittedAt: new Date().toISOString(),
          },
          (async function* () {
            yield REPORT;
          })(),
          () => ({ sizeBytes: REPORT.length, sha256: '0'.repeat(64), requestHash: 'h' }),
        );
        expect(queued.kind).toBe('created');
        // Its next try (2 s after the second failure) opens the database and looks for what is queued.
        expect((await seen((event) => event.scanId === id)).status).toBe('succeeded');
        expect((await storage.getScan({ tenantId: TENANT_A, dataVersion: 0 }, id))?.status).toBe('succeeded');
      } finally {
        await storage.close();
      }
    } finally {
      await scans.stop();
      await forwarding?.close();
      await database.drop();
    }
  });

  it('stopped while it waits to try again, ends', async () => {
    const { scans, events, seen } = thread(`postgres://postgres@127.0.0.1:${await freePort()}/refused`);
    await seen((event) => event.status === 'error');
    // Stopped during its first wait (1 s): the thread exits, and no try comes after.
    await scans.stop();
    const tried = events.length;
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(events.length).toBe(tried);
    expect(tried).toBe(1);
  });
});
