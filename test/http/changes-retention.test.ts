// Retention of the change log through app.inject on a real database: once the oldest changes are pruned, a cursor from
// before the pruned part is 410 `gone` (field `cursor`, a message saying to read everything again), even for the same
// request answered 200 before (no kept body, no 304); a cursor exactly at the pruned boundary misses nothing and is 200.
// The scan runner of `secinv serve` prunes the log on the schedule it prunes scans on.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GONE_MESSAGE } from '../../src/http/docs.js';
import { scanRunner, type ScanEvent } from '../../src/ingest/scan-runner.js';
import { fixture } from '../fixtures.js';
import { setupWithKeys, TENANT_A, TENANT_B, type TestContext } from '../helpers.js';
import { ingestTexts } from '../ingest/run.js';
import { TEAMDOJO, type ChangePage } from '../changes.js';

const DAY = 24 * 60 * 60 * 1000;

let ctx: TestContext;
let key: string;
let keyB: string;
beforeAll(async () => {
  const set = await setupWithKeys(fixture, [TENANT_A, TENANT_B] as const);
  ctx = set.ctx;
  [key, keyB] = set.keys;
});
afterAll(async () => ctx.close());

const get = (url: string, headers: Record<string, string> = {}, as = key) =>
  ctx.app.inject({ url, headers: { authorization: `Bearer ${as}`, ...headers } });
const page = async (url: string, as = key): Promise<ChangePage> => {
  const res = await get(url, {}, as);
  expect(res.statusCode, res.body).toBe(200);
  return res.json<ChangePage>();
};
const expectGone = async (url: string, headers: Record<string, string> = {}) => {
  const res = await get(url, headers);
  expect(res.statusCode, res.body).toBe(410);
  expect(res.json()).toEqual({ errors: [{ code: 'gone', field: 'cursor', message: GONE_MESSAGE }] });
};
// The message says what to do: read everything again and follow from there.
expect(GONE_MESSAGE).toMatch(/read the inventory again .* and follow from there/);

describe('change log retention', () => {
  /** The position of the import's last change (the fixture's), as a cursor at it, and one a change before it. */
  let boundary: string;
  let beforeBoundary: string;
  let head: string;

  it('a cursor before the pruned part is 410 gone; one at its boundary reads on with nothing missed', async () => {
    // The fixture's import: its whole log, then cursors at its last change and one before it, issued as a client gets
    // them (full pages).
    const all = await page('/v1/tenant/changes?perPage=1000');
    const imported = all.data.length;
    expect(imported).toBeGreaterThan(1);
    boundary = all.meta.cursor;
    beforeBoundary = (await page(`/v1/tenant/changes?perPage=${imported - 1}`)).meta.cursor;
    // A scan, committed after the import: its changes are younger than the cutoff at its first.
    await new Promise((resolve) => setTimeout(resolve, 5));
    const ingested = await ingestTexts(
      ctx.storage,
      { 'teamdojo.json': TEAMDOJO },
      // At the system's time (the write's clock, which times its changes), after the import's.
      { provider: 'AWS', recordScans: true, now: () => new Date() },
    );
    expect(ingested.problems).toEqual([]);
    const scan = await page(`/v1/tenant/changes?perPage=1000&cursor=${boundary}`);
    expect(scan.data.length).toBeGreaterThan(0);
    expect(all.data.every((c) => c.at < scan.data[0]!.at)).toBe(true);
    head = scan.meta.cursor;

    // Read once before the prune, the data as it will be pruned: 200, the last change of the import and the scan's,
    // and a tag.
    const earlier = await get(`/v1/tenant/changes?perPage=1000&cursor=${beforeBoundary}`);
    expect(earlier.statusCode).toBe(200);
    expect(earlier.json<ChangePage>().data).toEqual([all.data[imported - 1], ...scan.data]);
    const etag = String(earlier.headers.etag);

    // Every change older than the scan's first: the import's of tenant A, and tenant B's whole log.
    const oldB = (await page('/v1/tenant/changes?perPage=1000', keyB)).data.length;
    expect(await ctx.storage.pruneChanges(scan.data[0]!.at, { batch: 10 })).toBe(imported + oldB);

    // One change before the boundary: it was pruned, the client must read everything again. The same request that was
    // answered 200 above is not answered from that answer again (kept body, If-None-Match).
    await expectGone(`/v1/tenant/changes?perPage=1000&cursor=${beforeBoundary}`, { 'if-none-match': etag });
    await expectGone(`/v1/tenant/changes?perPage=1000&cursor=${beforeBoundary}`);
    // Exactly at the boundary: everything after it is still there.
    const after = await page(`/v1/tenant/changes?perPage=1000&cursor=${boundary}`);
    expect(after.data).toEqual(scan.data);
    expect(after.meta.cursor).toBe(head);
    // Without a cursor: the log from the first change kept.
    expect((await page('/v1/tenant/changes?perPage=1000')).data).toEqual(scan.data);
    // A scan's diff reads from its own cursors, gone as well before the boundary.
    const scanId = String((scan.data[0] as unknown as { cause: { scanId: string } }).cause.scanId);
    expect((await page(`/v1/tenant/scans/${scanId}/changes?perPage=1000`)).data).toEqual(scan.data);
    // Tenant B's log is empty now, and read from its start it is still 200: nothing after its position was lost.
    expect((await page('/v1/tenant/changes', keyB)).data).toEqual([]);
  });

  it("the scan runner prunes the changes past their retention, on the scans' schedule", async () => {
    const events: ScanEvent[] = [];
    // A day's retention seen from two days ahead: every change so far is past it; the scans are kept.
    const runner = scanRunner(ctx.storage, {
      owner: 'test',
      leaseMs: 60_000,
      pollMs: 60_000,
      now: () => new Date(Date.now() + 2 * DAY),
      retention: { scansMs: 1000 * DAY, changesMs: DAY, everyMs: 60 * 60 * 1000 },
      log: (event) => void events.push(event),
    });
    runner.wake();
    await expect
      .poll(() => events.filter((e) => e.status === 'pruned').map((e) => e.message), { timeout: 10_000 })
      .toEqual([expect.stringMatching(/^\d+ changes deleted$/)]);
    await runner.stop();
    // The scan's changes went too: the cursor at the old boundary is gone, the head reads on (nothing after it).
    await expectGone(`/v1/tenant/changes?cursor=${boundary}`);
    expect((await page(`/v1/tenant/changes?cursor=${head}`)).data).toEqual([]);
    expect((await page('/v1/tenant/scans')).data).toHaveLength(1);
  });
});
