// SIGTERM under load, on a real `secinv serve` process: every request sent before the signal is answered normally
// (none reset, none a bare 503), /readyz fails as soon as the signal is handled, answers during the grace period close
// their connections, and the process exits 0.
import { request, type IncomingHttpHeaders } from 'node:http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { fixture } from '../fixtures.js';
import { openStorageWithKeys, TENANT_A, type TestStorage } from '../helpers.js';
import { exitCodeAfter, spawnServe } from './serve-process.js';

let admin: TestStorage;
let key: string;
beforeAll(async () => {
  ({
    opened: admin,
    keys: [key],
  } = await openStorageWithKeys(fixture, [TENANT_A]));
});
afterAll(async () => admin.dispose());

interface Outcome {
  sentAt: number;
  status?: number;
  headers?: IncomingHttpHeaders;
  error?: string;
}

/** One GET on a connection of its own (no agent: a fresh TCP connection each time, as new clients arrive). */
const get = (port: number, path: string): Promise<Outcome> =>
  new Promise((resolve) => {
    const sentAt = Date.now();
    const req = request(
      { host: '127.0.0.1', port, path, agent: false, headers: { authorization: `Bearer ${key}` } },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ sentAt, status: res.statusCode, headers: res.headers }));
        res.on('error', (e) => resolve({ sentAt, error: e.message }));
      },
    );
    req.on('error', (e: NodeJS.ErrnoException) => resolve({ sentAt, error: e.code ?? e.message }));
    req.end();
  });

it('SIGTERM under load: every request sent before it is answered 200, then the process exits 0', async () => {
  const { child, port } = await spawnServe(admin.url, {
    SECINV_SHUTDOWN_GRACE_MS: '1500',
    SECINV_RATE_LIMIT_PER_MINUTE: '0',
  });
  let signalledAt = Infinity;
  let stop = false;
  const outcomes: Outcome[] = [];
  // 24 loops, each request on a new connection: under load some of them wait in the listen backlog at the signal.
  const loops = Array.from({ length: 24 }, async () => {
    while (!stop) outcomes.push(await get(port, '/v1/tenant/assets?perPage=100'));
  });
  // A second at least, and until the loops have had answers (on a loaded machine the first can take longer).
  await new Promise((resolve) => setTimeout(resolve, 1000));
  while (outcomes.length <= 48) await new Promise((resolve) => setTimeout(resolve, 20));
  signalledAt = Date.now();
  const exited = exitCodeAfter(child, 'SIGTERM');
  // The server handles the signal at its event loop's next turn: a /readyz already waiting for it may still be
  // answered 200 while both cores are busy. It must fail well within the grace period, and then stay failed.
  const readiness: (number | undefined)[] = [];
  while (readiness.length < 20 && readiness.at(-1) !== 503) {
    readiness.push((await get(port, '/readyz')).status);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  const again = await get(port, '/readyz');
  // The load stops 600 ms after the signal, well before the grace period of 1,500 ms ends.
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, signalledAt + 600 - Date.now())));
  stop = true;
  await Promise.all(loops);
  expect(await exited).toBe(0);

  expect(readiness.at(-1)).toBe(503);
  expect(again.status).toBe(503);
  const before = outcomes.filter((o) => o.sentAt < signalledAt);
  const during = outcomes.filter((o) => o.sentAt >= signalledAt);
  expect(before.length).toBeGreaterThan(24);
  expect(during.length).toBeGreaterThan(0);
  expect(before.filter((o) => o.status !== 200)).toEqual([]);
  // Within the grace period requests are still served, each answer closing its connection.
  expect(during.filter((o) => o.status !== 200)).toEqual([]);
  expect(during.every((o) => o.headers?.connection === 'close')).toBe(true);
}, 60_000);
