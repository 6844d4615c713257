// The dispatcher's three days (pipeline.md §5), in process on a real database and a real loopback receiver, its clock
// an option it is given: a batch that keeps failing is tried after the schedule's waits, and the failure at the end
// of the window disables the endpoint, saying since when and what the last answer was. Its changes stay for enable.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RETRY_WINDOW_MS } from '../../src/domain/webhooks.js';
import { startDispatcher } from '../../src/webhooks/dispatcher.js';
import { importRecords, openTestStorage, TENANT_A, type TestStorage } from '../helpers.js';
import { assetRecord, tenantRecord } from '../records.js';
import { createEndpoint, waitFor } from './receiver.js';

let opened: TestStorage;
let server: Server;
let url: string;
let hits = 0;
beforeAll(async () => {
  opened = await openTestStorage();
  server = createServer((request, response) => {
    request.resume();
    hits += 1;
    response.writeHead(500).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await opened.dispose();
});

describe('the dispatcher', () => {
  it('tries a failing batch for three days by its clock, then disables the endpoint saying why', async () => {
    const { storage } = opened;
    expect((await importRecords(storage, [tenantRecord()])).problems).toEqual([]);
    const { id } = await createEndpoint(storage, TENANT_A, url);
    expect((await importRecords(storage, [assetRecord('sirn:three-days')])).problems).toEqual([]);
    const start = Date.parse('2026-03-01T00:00:00.000Z');
    let clock = start;
    const dispatcher = startDispatcher(storage, {
      owner: 'test',
      pollMs: 20,
      timeoutMs: 5000,
      leaseMs: 60_000,
      retryScale: 1,
      allowPrivate: true,
      now: () => new Date(clock),
    });
    try {
      const pendingAfter = (failures: number) =>
        waitFor(`${failures} failures`, async () => {
          const hook = await storage.getWebhook(id);
          return hook?.pending?.failures === failures ? hook.pending : undefined;
        });
      const first = await pendingAfter(1);
      expect(first).toMatchObject({
        failingSince: '2026-03-01T00:00:00.000Z',
        nextAttemptAt: '2026-03-01T00:00:10.000Z',
      });
      // Not due: nothing is sent.
      clock = start + 9_000;
      dispatcher.wake();
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(hits).toBe(1);
      clock = start + 10_000;
      dispatcher.wake();
      expect((await pendingAfter(2)).nextAttemptAt).toBe('2026-03-01T00:01:10.000Z');
      // The last attempt comes at the end of the window; failing then, the endpoint is disabled.
      clock = start + RETRY_WINDOW_MS;
      dispatcher.wake();
      const disabled = await waitFor('the endpoint disabled', async () => {
        const hook = await storage.getWebhook(id);
        return hook?.enabled === false ? hook : undefined;
      });
      expect(disabled.disabledReason).toBe('failing since 2026-03-01T00:00:00.000Z (3 attempts), last: HTTP 500');
      expect(disabled.pending).toMatchObject({ failures: 3 });
      expect(hits).toBe(3);
      expect((await storage.webhookAttempts(id, 10)).map((a) => a.status)).toEqual([500, 500, 500]);
    } finally {
      await dispatcher.stop();
    }
  });
});
