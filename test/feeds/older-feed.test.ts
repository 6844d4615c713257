// The older-feed guard (src/feeds/load.ts) runs inside the load's transaction, after the loads of other connections
// before it have committed (src/storage/feeds/load.ts): a load that read its file before a newer one was loaded is still
// refused against that one, and on PostgreSQL a load waits for one in progress to commit before it checks.
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FeedData, FeedStatus } from '../../src/domain/intel.js';
import { loadFeedFiles } from '../../src/feeds/load.js';
import { readFeed, type FeedSource } from '../../src/feeds/read.js';
import { openStorage, type Storage } from '../../src/storage/index.js';
import { openTestStorage, TEST_DIALECTS, type TestStorage } from '../helpers.js';
import { kevCatalog } from './kev-catalog.js';

const CVES = ['CVE-2024-0001', 'CVE-2024-0002'];
const kev = (version: string): FeedSource => ({
  name: `kev-${version}.json`,
  open: () => Readable.from([Buffer.from(kevCatalog(version, CVES))]),
});
const kevData = async (version: string): Promise<FeedData> => {
  const read = await readFeed(kev(version));
  if (!('data' in read)) throw new Error(read.problems.join('; '));
  return read.data;
};
const versions = (loaded: FeedStatus[]) => loaded.map((f) => [f.feed, f.version]);
/** A promise and the function that settles it. */
const signal = () => {
  let settle!: () => void;
  const done = new Promise<void>((resolve) => (settle = resolve));
  return { done, settle };
};

describe.each(TEST_DIALECTS)('an older feed on %s', (dialect) => {
  let t: TestStorage;
  beforeAll(async () => {
    t = await openTestStorage(dialect);
  });
  afterAll(async () => t?.dispose());

  it('read before a newer one was loaded, is refused against that one when its turn comes', async () => {
    const reached = signal();
    const gate = signal();
    // The older file is read and checked for problems, then waits at the load while the newer one loads whole.
    const paused: Storage = {
      ...t.storage,
      loadFeeds: async (...args) => {
        reached.settle();
        await gate.done;
        return t.storage.loadFeeds(...args);
      },
    };
    const older = loadFeedFiles(paused, [kev('2026.11.20')]);
    await reached.done;
    expect((await loadFeedFiles(t.storage, [kev('2026.11.24')])).problems).toEqual([]);
    gate.settle();
    const outcome = await older;
    expect(outcome.load).toBeNull();
    expect(outcome.problems).toEqual([
      {
        file: 'kev-2026.11.20.json',
        message: expect.stringMatching(/^is CISA KEV 2026\.11\.20, older than the 2026\.11\.24 loaded at /) as string,
      },
    ]);
    expect(versions(await t.storage.feedStatus())).toEqual([['kev', '2026.11.24']]);
  });

  it.runIf(dialect === 'postgres')('waits for a load in progress and checks against what it loaded', async () => {
    const other = await openStorage(t.url);
    try {
      const entered = signal();
      const gate = signal();
      const first = t.storage.loadFeeds([await kevData('2026.12.01')], '2026-12-01T00:00:00.000Z', async () => {
        entered.settle();
        await gate.done;
      });
      await entered.done;
      let seen: FeedStatus[] | undefined;
      const second = other.loadFeeds([await kevData('2026.12.02')], '2026-12-02T00:00:00.000Z', (loaded) => {
        seen = loaded;
      });
      // The second load's check has not run while the first holds its turn.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(seen).toBeUndefined();
      gate.settle();
      await first;
      await second;
      expect(versions(seen ?? [])).toEqual([['kev', '2026.12.01']]);
    } finally {
      await other.close();
    }
  });
});
