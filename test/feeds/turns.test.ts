// On PostgreSQL a feed load and the bulk writes that read the feeds (imports, ingests, risk derivations) take turns
// (src/storage/tx/write.ts, docs/DESIGN.md §87). Without them an ingest that read the feeds before a load committed, and
// committed after the load had re-enriched the findings it could see, kept findings without the load's intel: a
// finding whose CVE the loaded catalog lists, with hasKev false, until the next load changed that CVE. SQLite has one
// writer at a time: a second write waits for the first to commit before its first read (test/cli/ingest.test.ts).
import { Readable } from 'node:stream';
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FeedData } from '../../src/domain/intel.js';
import { loadFeedFiles } from '../../src/feeds/load.js';
import { readFeed } from '../../src/feeds/read.js';
import { openStorage } from '../../src/storage/index.js';
import type { Database } from '../../src/storage/db/tables.js';
import { ORG_A, TENANT_A, TEST_DIALECTS, type TestStorage } from '../helpers.js';
import {
  besideDatabase,
  heldIngest,
  ingestInto,
  pause,
  textSource as text,
  trivyImage as trivy,
} from '../ingest/beside.js';
import { kevCatalog } from './kev-catalog.js';

const CVE = 'CVE-2026-4242';
const kevData = async (version: string): Promise<FeedData> => {
  const read = await readFeed({
    name: 'kev.json',
    open: () => Readable.from([Buffer.from(kevCatalog(version, [CVE]))]),
  });
  if (!('data' in read)) throw new Error(read.problems.join('; '));
  return read.data;
};
/** A promise, the function that settles it, and whether it has been. */
const signal = () => {
  let settle!: () => void;
  const state = { settled: false, done: new Promise<void>((resolve) => (settle = resolve)), settle: () => {} };
  state.settle = () => {
    state.settled = true;
    settle();
  };
  return state;
};
if (TEST_DIALECTS.includes('postgres'))
  describe('feed loads and the writes that read the feeds, on postgres', () => {
    let t: TestStorage;
    let db: Kysely<Database>;
    let close: () => Promise<void>;
    beforeAll(async () => {
      ({ t, db, close } = await besideDatabase([[TENANT_A, ORG_A]]));
    });
    afterAll(async () => close?.());
    /** Each stored finding of the CVE: its image and whether it has the flag. */
    const flagged = async () =>
      (
        await sql<{ asset_id: string; has_kev: number }>`select asset_id, has_kev from vulnerabilities
          where vulnerability_id = ${CVE} order by asset_id`.execute(db)
      ).rows.map((r) => [r.asset_id.replace(/.*amazonaws\.com\/(\w+)@.*/, '$1'), r.has_kev]);

    it('a load that starts while an ingest runs waits for its commit, then flags what it wrote', async () => {
      // The ingest's first report is written (its findings' intel read from the feeds as they were), then it waits
      // inside its transaction for the second report's bytes.
      const { running, release } = await heldIngest(t.storage, TENANT_A, text('first.json', trivy('first', [CVE])));
      const waited = signal();
      const load = loadFeedFiles(t.storage, [text('kev.json', kevCatalog('2026.11.24', [CVE]))], {
        onWait: waited.settle,
      });
      // Without the turn the load went on at once, re-enriched the findings it could see (not the ingest's), and then
      // waited for the ingest's row locks: the ingest is let go on after a while so that the outcome shows.
      await Promise.race([waited.done, load, pause(3000)]);
      release(trivy('second', ['CVE-2026-0001']));
      expect((await running).problems).toEqual([]);
      const loaded = await load;
      expect(loaded.problems).toEqual([]);
      expect({ waited: waited.settled, reEnriched: loaded.load?.findingsUpdated, flagged: await flagged() }).toEqual({
        waited: true,
        reEnriched: 1,
        flagged: [['first', 1]],
      });
    });

    it('an ingest or a derivation that starts while a load runs waits for its commit, then reads its feeds', async () => {
      // A newer catalog, held inside its transaction (its turn taken) until the test lets it go on.
      const other = await openStorage(t.url);
      try {
        const entered = signal();
        const gate = signal();
        const load = other.loadFeeds([await kevData('2026.11.25')], '2026-11-25T00:00:00.000Z', async () => {
          entered.settle();
          await gate.done;
        });
        await entered.done;
        const ingestWaited = signal();
        const running = ingestInto(
          t.storage,
          TENANT_A,
          [text('third.json', trivy('third', [CVE]))],
          ingestWaited.settle,
        );
        const deriveWaited = signal();
        const deriving = t.storage.deriveRisks(TENANT_A, '2026-11-25T00:00:00.000Z', deriveWaited.settle);
        await Promise.race([Promise.all([ingestWaited.done, deriveWaited.done]), pause(3000)]);
        gate.settle();
        await load;
        expect((await running).problems).toEqual([]);
        expect(await deriving).toBeDefined();
        expect({ waited: [ingestWaited.settled, deriveWaited.settled], flagged: await flagged() }).toEqual({
          waited: [true, true],
          flagged: [
            ['first', 1],
            ['third', 1],
          ],
        });
      } finally {
        await other.close();
      }
    });
  });
