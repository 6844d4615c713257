// Readers while `secinv import` runs again and again in processes of its own: every response is wholly before or
// wholly after each import. Each import adds a round of assets, each with a finding, so a response is one of a few
// known states: the rounds it shows are 1..k with nothing of round k+1, every asset of a round shown carries its
// finding's count, and a page's rows agree with its total. For certain rather than by chance, one request per import
// is held after its first statement until the import's process has committed and exited: it must still answer the
// state before; meanwhile other requests read on.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { openStorage, type Storage } from '../../src/storage/index.js';
import { fixture } from '../fixtures.js';
import { createKey, importRecords, setup, TENANT_A, type TestContext } from '../helpers.js';
import { assetRecord, findingRecord, ndjson, type ImportRecord } from '../records.js';
import { runCli } from './serve-process.js';

const ROUNDS = 3;
const PER_ROUND = 100;
const CVE = 'CVE-2099-0001';

let ctx: TestContext;
/** When set, runs once, after the next asset page statement has run and before the request's next statement. */
let hold: (() => Promise<void>) | undefined;
/**
 * The held request's app, and the other readers' on connections of their own (SQLite's one connection is busy with
 * the held request's transaction); neither with a rate limit, which the readers would pass.
 */
let app: FastifyInstance;
let readerStorage: Storage;
let readerApp: FastifyInstance;
let key: string;
let base: number;
const files: string[] = [];

beforeAll(async () => {
  ctx = await setup(undefined, {
    onQuery: async (sql) => {
      if (!hold || !/^select "assets"\."id", "assets"\."\w+" as "sortValue"/.test(sql)) return;
      const during = hold;
      hold = undefined;
      await during();
    },
  });
  app = await buildApp({ storage: ctx.apiStorage, http: { rateLimitPerMinute: 0 } });
  readerStorage = await openStorage(ctx.url, { role: 'api' });
  readerApp = await buildApp({ storage: readerStorage, http: { rateLimitPerMinute: 0 } });
  expect((await importRecords(ctx.storage, fixture)).problems).toEqual([]);
  key = await createKey(ctx.storage, TENANT_A);
  base = (await get('/v1/tenant/assets?perPage=1')).meta.total;
  for (let round = 1; round <= ROUNDS; round += 1) {
    const records: ImportRecord[] = [];
    for (let i = 0; i < PER_ROUND; i += 1) {
      const id = `sirn:assets:round-${round}-${i}`;
      records.push(assetRecord(id, { name: `round ${round}` }), findingRecord(id, CVE));
    }
    files.push(join(ctx.dir, `round-${round}.ndjson`));
    writeFileSync(files[round - 1]!, ndjson(records));
  }
});
afterAll(async () => {
  await readerApp.close();
  await readerStorage.close();
  await app.close();
  await ctx.close();
});

type Page = { data: Record<string, unknown>[]; meta: { total: number } };
async function get(url: string, server = app): Promise<Page> {
  const res = await server.inject({ url, headers: { authorization: `Bearer ${key}` } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<Page>();
}

/** The number of rounds an asset page shows, after checking it is wholly one state. */
function roundsOfAssets(page: Page): number {
  expect(page.data).toHaveLength(page.meta.total);
  const perRound = new Map<number, number>();
  for (const asset of page.data) {
    const round = /^sirn:assets:round-(\d+)-/.exec(String(asset.id))?.[1];
    if (round === undefined) continue;
    perRound.set(Number(round), (perRound.get(Number(round)) ?? 0) + 1);
    // Its finding came in the same import: the derived count cannot lag behind the asset.
    expect(asset.numberOfHighVulnerabilities, String(asset.id)).toBe(1);
  }
  const rounds = perRound.size;
  for (let round = 1; round <= rounds; round += 1) expect(perRound.get(round), `round ${round}`).toBe(PER_ROUND);
  expect(page.meta.total).toBe(base + rounds * PER_ROUND);
  return rounds;
}

/** The same for the findings of the rounds. */
function roundsOfFindings(page: Page): number {
  expect(page.data).toHaveLength(page.meta.total);
  expect(page.meta.total % PER_ROUND).toBe(0);
  return page.meta.total / PER_ROUND;
}

describe('readers during repeated imports from another process', () => {
  it('see every response wholly before or wholly after each import', { timeout: 120_000 }, async () => {
    for (let round = 1; round <= ROUNDS; round += 1) {
      let imported = false;
      let reads = 0;
      hold = async () => {
        const importing = runCli(['import', '--quiet', '--db', ctx.url, files[round - 1]!]).then((run) => {
          expect(run.code, run.stderr).toBe(0);
          imported = true;
        });
        // Other readers while it runs: each response one state or the next.
        while (!imported) {
          const findings = await get(`/v1/tenant/vulnerabilities?perPage=1000&vulnerabilityIds=${CVE}`, readerApp);
          expect(roundsOfFindings(findings)).oneOf([round - 1, round]);
          reads += 1;
          // On SQLite a request can complete without waiting on any I/O: let the child's events through.
          await new Promise(setImmediate);
        }
        await importing;
      };
      // A filter spelled anew each round, so its count is not cached but made after the import committed; with a date,
      // which only SQL counts (not the columns kept in memory).
      const providers = ['AWS', 'GCP', 'Azure', 'Kubernetes'];
      providers.push(...providers.splice(0, round));
      const held = await get(
        `/v1/tenant/assets?perPage=1000&sortBy=name&firstObservedAtStart=2000-01-01&providers=${providers.join(',')}`,
      );
      expect(hold).toBeUndefined();
      expect(imported).toBe(true);
      expect(reads).toBeGreaterThan(0);
      expect(roundsOfAssets(held)).toBe(round - 1);
      expect(roundsOfAssets(await get('/v1/tenant/assets?perPage=1000'))).toBe(round);
    }
  });
});
