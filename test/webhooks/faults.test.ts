// Webhook faults (pipeline.md §5), each on one real `secinv serve` and a real receiver process on a loopback port:
// a redirect and a 500 are retried, then the 200 ends the batch (delivered once per success, the same webhook-id each
// time, the redirect not followed); a receiver too slow for the timeout is retried; a 410 disables the endpoint; a
// receiver down for a while gets everything once it is back, in order; a write rolled back sends nothing. The retry
// schedule is scaled down (SECINV_TEST_WEBHOOK_RETRY_MS: 100 ms, 600 ms, 6 s, …) and the timeout is 1 s.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { steadyPort, TENANT_A } from '../helpers.js';
import { runCli } from '../http/serve-process.js';
import { assetRecord, findingRecord, ndjson } from '../records.js';
import {
  createEndpoint,
  deduplicated,
  receivedChanges,
  scanChanges,
  servedWithReceiver,
  startReceiver,
  uploadScan,
  waitFor,
  type Receiver,
} from './receiver.js';

const SERVE_ENV = {
  SECINV_WEBHOOK_ALLOW_PRIVATE: 'true',
  SECINV_TEST_WEBHOOK_RETRY_MS: '100',
  SECINV_TEST_WEBHOOK_TIMEOUT_MS: '1000',
};

const served = servedWithReceiver(SERVE_ENV);

/** An endpoint at `name` of this receiver, which is told its secret. */
async function endpoint(name: string, at: Receiver = served.receiver): Promise<string> {
  const { id, secret } = await createEndpoint(served.admin.storage, TENANT_A, at.url(name));
  await at.control(name, { secret });
  return id;
}

const statuses = async (id: string) =>
  (await served.admin.storage.webhookAttempts(id, 100)).reverse().map((a) => a.status ?? a.error);

describe('webhook faults on a real server', () => {
  it('a redirect and a 500 are retried under the same id; the 200 ends the batch, sent once per success', async () => {
    const id = await endpoint('flaky');
    await served.receiver.control('flaky', {
      answers: [{ status: 302, location: served.receiver.url('elsewhere') }, { status: 500 }],
    });
    const scan = await uploadScan(served.base, served.ingestKey, 'flaky');
    const expected = await scanChanges(served.base, served.readKey, scan);
    const got = await waitFor('the 200', () => {
      const received = served.receiver.received('flaky');
      return received.some((r) => r.answered === 200) ? received : undefined;
    });
    expect(got.map((r) => r.answered)).toEqual([302, 500, 200]);
    expect(new Set(got.map((r) => r.id)).size).toBe(1);
    expect(got.every((r) => r.verified)).toBe(true);
    for (const r of got) expect(r.body?.changes).toEqual(expected);
    expect(served.receiver.received('elsewhere')).toEqual([]);
    // The server records an attempt after the receiver logged its answer: wait for the third.
    const attempts = await waitFor('three attempts recorded', async () => {
      const recorded = (await served.admin.storage.webhookAttempts(id, 10)).reverse();
      return recorded.length >= 3 ? recorded : undefined;
    });
    // Tried again 100 ms after the first failure, then 600 ms after the second (the schedule scaled by 1/100).
    const started = attempts.map((a) => Date.parse(a.at));
    expect(started[1]! - started[0]!).toBeGreaterThanOrEqual(100);
    expect(started[2]! - started[1]!).toBeGreaterThanOrEqual(600);
    expect(started[2]! - started[1]!).toBeLessThan(3000);
    expect(attempts.map((a) => [a.status, a.error])).toEqual([
      [302, `redirect to ${served.receiver.url('elsewhere')} not followed`],
      [500, null],
      [200, null],
    ]);
    // Nothing more comes for that batch.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(served.receiver.received('flaky')).toHaveLength(3);
    expect((await served.admin.storage.getWebhook(id))!).toMatchObject({
      pending: null,
      position: Number(expected.at(-1)!.seq),
    });
    await served.admin.storage.deleteWebhook(id);
  });

  it('a receiver slower than the timeout: the attempt fails at 1 s and the batch is sent again', async () => {
    const id = await endpoint('slow');
    await served.receiver.control('slow', { answers: [{ status: 200, delayMs: 3000 }] });
    const scan = await uploadScan(served.base, served.ingestKey, 'slow');
    const expected = await scanChanges(served.base, served.readKey, scan);
    await waitFor('the second attempt', async () => ((await statuses(id)).length >= 2 ? true : undefined));
    const attempts = (await served.admin.storage.webhookAttempts(id, 10)).reverse();
    expect(attempts.map((a) => [a.status, a.error])).toEqual([
      [null, 'timed out after 1000 ms'],
      [200, null],
    ]);
    expect(attempts[0]!.durationMs).toBeGreaterThanOrEqual(990);
    expect(attempts[0]!.durationMs).toBeLessThan(2500);
    const got = served.receiver.received('slow');
    expect(got.map((r) => r.id)).toEqual([attempts[0]!.deliveryId, attempts[0]!.deliveryId]);
    expect(deduplicated(got).changes).toEqual(expected);
    await served.admin.storage.deleteWebhook(id);
  });

  it('a 410 disables the endpoint at once, saying why; nothing more is sent to it', async () => {
    const id = await endpoint('gone');
    await served.receiver.control('gone', { then: { status: 410 } });
    await uploadScan(served.base, served.ingestKey, 'gone-1');
    const hook = await waitFor('the endpoint disabled', async () => {
      const found = await served.admin.storage.getWebhook(id);
      return found?.enabled === false ? found : undefined;
    });
    expect(hook.disabledReason).toMatch(/^the receiver answered 410 Gone at /);
    await uploadScan(served.base, served.ingestKey, 'gone-2');
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(served.receiver.received('gone').map((r) => r.answered)).toEqual([410]);
    expect(await statuses(id)).toEqual([410]);
    const listed = await runCli(['webhooks', 'list', '--db', served.admin.url]);
    expect(listed.stdout).toMatch(new RegExp(`${id} .* disabled .*: the receiver answered 410 Gone`));
    await served.admin.storage.deleteWebhook(id);
  });

  it('a receiver down for a while gets everything once it is back, in order', async () => {
    const log = join(served.dir, 'down.jsonl');
    // Started again on the same port below: one the kernel does not hand out meanwhile.
    const first = await startReceiver(served.dir, await steadyPort(), log);
    const id = await endpoint('down', first);
    const secret = (await served.admin.storage.webhookSecret(id))!;
    await first.kill();
    const scans = [
      await uploadScan(served.base, served.ingestKey, 'down-1'),
      await uploadScan(served.base, served.ingestKey, 'down-2'),
    ];
    const expected = [
      ...(await scanChanges(served.base, served.readKey, scans[0]!)),
      ...(await scanChanges(served.base, served.readKey, scans[1]!)),
    ];
    await waitFor('two refused attempts', async () =>
      (await statuses(id)).filter((s) => s === 'connection refused').length >= 2 ? true : undefined,
    );
    expect(first.received('down')).toEqual([]);
    // Started knowing the secret: a retry may reach it before any control request would.
    const back = await startReceiver(served.dir, first.port, log, { down: { secret } });
    try {
      // On a loaded machine the receiver may come back after the third attempt (6 s): the fourth is 36 s later.
      const changes = await receivedChanges(back, 'down', expected.length, 60_000);
      expect(changes).toEqual(expected);
      const seqs = changes.map((c) => Number(c.seq));
      expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
      expect(back.received('down').every((r) => r.verified)).toBe(true);
    } finally {
      await back.kill();
      await served.admin.storage.deleteWebhook(id);
    }
  }, 90_000);

  it('a write rolled back (the import killed before its commit) sends nothing; the next one is sent from where it was', async () => {
    const id = await endpoint('rollback');
    const start = (await served.admin.storage.getWebhook(id))!.position;
    const file = join(served.dir, 'rolled-back.ndjson');
    writeFileSync(
      file,
      ndjson([assetRecord('sirn:rolled-back'), findingRecord('sirn:rolled-back', 'CVE-2026-9999', 'CRITICAL')]),
    );
    const killed = await runCli(['import', '--quiet', '--db', served.admin.url, file], {
      SECINV_TEST_IMPORT_KILL_AT: 'settled',
    });
    expect(killed.signal).toBe('SIGKILL');
    const scan = await uploadScan(served.base, served.ingestKey, 'after-rollback');
    const expected = await scanChanges(served.base, served.readKey, scan);
    expect(Number(expected[0]!.seq)).toBe(start + 1);
    const changes = await receivedChanges(served.receiver, 'rollback', expected.length);
    expect(changes).toEqual(expected);
    expect(changes.some((c) => c.assetId === 'sirn:rolled-back')).toBe(false);
    await served.admin.storage.deleteWebhook(id);
  });
});
