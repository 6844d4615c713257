// The scan runner's loop (src/ingest/scan-runner.ts): a wake is never lost, whenever it comes.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scanRunner } from '../../src/ingest/scan-runner.js';
import type { ClaimedScan, Storage } from '../../src/storage/index.js';
import { fixture } from '../fixtures.js';
import { createKey, setupWithKeys, TENANT_A, type TestContext } from '../helpers.js';

const TRIVY = readFileSync(
  new URL('../fixtures/ingest/trivy/trivy-image-example-app-all-statuses.json', import.meta.url),
);

let ctx: TestContext;
let key: string;
beforeAll(async () => {
  ({ ctx } = await setupWithKeys(fixture, [TENANT_A] as const));
  key = await createKey(ctx.storage, TENANT_A, { scopes: ['read', 'ingest'] });
});
afterAll(async () => ctx.close());

const upload = async (query = '?provider=AWS&region=us-east-1'): Promise<string> => {
  const answer = await ctx.app.inject({
    method: 'POST',
    url: `/v1/tenant/scans${query}`,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    payload: TRIVY,
  });
  expect(answer.statusCode).toBe(202);
  return answer.json<{ data: { id: string } }>().data.id;
};
const statusOf = async (id: string): Promise<string> =>
  (
    await ctx.app.inject({ method: 'GET', url: `/v1/tenant/scans/${id}`, headers: { authorization: `Bearer ${key}` } })
  ).json<{ data: { status: string } }>().data.status;

/** The test's storage, each claim, analysis and checkpoint noted in `events`; `afterClaim` runs after each claim. */
const noting = (events: string[], afterClaim?: (claim: ClaimedScan | undefined) => Promise<void>): Storage => ({
  ...ctx.storage,
  claimScan: async (...args) => {
    const claim = await ctx.storage.claimScan(...args);
    events.push(claim === undefined ? 'empty' : 'claimed');
    await afterClaim?.(claim);
    return claim;
  },
  analyzeTables: async (tables) => {
    events.push('analyzed');
    await ctx.storage.analyzeTables(tables);
  },
  checkpoint: async () => {
    events.push('checkpointed');
    await ctx.storage.checkpoint();
  },
});

describe('scan runner', () => {
  it('a scan queued, and its wake sent, while the runner finds the queue empty is applied at once, not at the next poll', async () => {
    let queued: Promise<string> | undefined;
    // The queue found empty, then a scan queued and its wake sent before the runner waits again: the moment a wake
    // fell between a look and the wait, and was lost until the next poll.
    const storage: Storage = {
      ...ctx.storage,
      claimScan: async (...args) => {
        const claim = await ctx.storage.claimScan(...args);
        if (claim === undefined && queued === undefined) {
          queued = upload();
          await queued;
          runner.wake();
        }
        return claim;
      },
    };
    // A poll far longer than the test: only the wake can bring the scan in.
    const runner = scanRunner(storage, { owner: 'test', leaseMs: 60_000, pollMs: 600_000 });
    runner.wake();
    try {
      const deadline = Date.now() + 20_000;
      while (queued === undefined) await new Promise((resolve) => setTimeout(resolve, 20));
      const id = await queued;
      let status = await statusOf(id);
      while (status !== 'succeeded' && status !== 'failed' && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        status = await statusOf(id);
      }
      expect(status).toBe('succeeded');
    } finally {
      await runner.stop();
    }
  });

  it('takes the statistics the scans left stale, then checkpoints, once the queue is empty, not after each scan', async () => {
    const events: string[] = [];
    const storage = noting(events);
    // A new image on another cluster: its findings move the tenant's tables by more than a tenth.
    const ids = [await upload('?provider=AWS&region=eu-west-1'), await upload('?provider=AWS&region=eu-west-2')];
    await scanRunner(storage, { owner: 'test', leaseMs: 60_000, pollMs: 600_000 }).drain();
    for (const id of ids) expect(await statusOf(id)).toBe('succeeded');
    expect(events).toEqual(['claimed', 'claimed', 'empty', 'analyzed', 'checkpointed']);
  });

  it('a queue that never empties gets its upkeep between two scans once the first has waited a minute for it', async () => {
    const events: string[] = [];
    // Each look at the clock a minute and a second later: the upkeep's wait is over by the next scan.
    let at = Date.now();
    const now = () => new Date((at += 61_000));
    const storage = noting(events);
    const ids = [await upload('?provider=AWS&region=ap-south-1'), await upload('?provider=AWS&region=ap-south-2')];
    await scanRunner(storage, { owner: 'test', leaseMs: 2 ** 40, pollMs: 600_000, now }).drain();
    for (const id of ids) expect(await statusOf(id)).toBe('succeeded');
    // After each scan (the clock a minute on at the next look), then at the end of the drain, with nothing stale left.
    const upkeep = ['analyzed', 'checkpointed'];
    expect(events).toEqual(['claimed', ...upkeep, 'claimed', ...upkeep, 'empty', 'checkpointed']);
  });

  it('the loop does the upkeep once it has been idle a poll interval: a scan that comes just after another goes first', async () => {
    const events: string[] = [];
    let second: Promise<string> | undefined;
    const storage = noting(events, async (claim) => {
      // The first scan applied and the queue found empty: the next one comes, as a CI job's does, at once.
      if (claim === undefined && second === undefined) {
        second = upload('?provider=AWS&region=eu-central-1');
        await second;
        runner.wake();
      }
    });
    const first = await upload('?provider=AWS&region=eu-north-1');
    const runner = scanRunner(storage, { owner: 'test', leaseMs: 60_000, pollMs: 300 });
    runner.wake();
    try {
      const deadline = Date.now() + 20_000;
      while (!events.includes('analyzed') && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 20));
    } finally {
      await runner.stop();
    }
    expect(await statusOf(first)).toBe('succeeded');
    expect(await statusOf(await second!)).toBe('succeeded');
    expect(events.slice(0, 6)).toEqual(['claimed', 'empty', 'claimed', 'empty', 'analyzed', 'checkpointed']);
  });
});
