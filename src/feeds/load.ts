// `secinv feeds load` and `feeds update`: every file read and checked first, then all of them stored in one
// transaction with the re-enrichment of every tenant's findings. Any problem in any file writes nothing.
import { Readable } from 'node:stream';
import { isOlderFeed, type FeedData, type FeedLoad, type FeedStatus } from '../domain/intel.js';
import type { FeedLoadPhase, Storage, WaitReason } from '../storage/index.js';
import { readProblem } from '../input/source.js';
import { feedWord, readFeed, type FeedSource } from './read.js';

export interface FeedProblem {
  file: string;
  message: string;
}

export type FeedLoadOutcome = { load: FeedLoad; problems: [] } | { load: null; problems: FeedProblem[] };

export interface FeedLoadOptions {
  /** Load a file older than the feed loaded (by the dates of their versions); refused otherwise. */
  allowOlder?: boolean;
  now?: () => Date;
  /** Called when the load waits for the writes that are running (PostgreSQL) or another process's (SQLite). */
  onWait?: (reason: WaitReason) => void;
  /** Called as each step of the load starts (Storage.loadFeeds). */
  onPhase?: (phase: FeedLoadPhase) => void;
}

export async function loadFeedFiles(
  storage: Storage,
  sources: readonly FeedSource[],
  { allowOlder = false, now = () => new Date(), onWait, onPhase }: FeedLoadOptions = {},
): Promise<FeedLoadOutcome> {
  const problems: FeedProblem[] = [];
  const feeds: FeedData[] = [];
  for (const source of sources) {
    try {
      const read = await readFeed(source);
      if ('problems' in read) {
        for (const message of read.problems) problems.push({ file: source.name, message });
        continue;
      }
      const twin = feeds.find((f) => f.feed === read.data.feed);
      if (twin) {
        problems.push({
          file: source.name,
          message: `is a second ${feedWord(read.data.feed)} file (${twin.source} is the first): give one file per feed`,
        });
        continue;
      }
      feeds.push(read.data);
    } catch (error) {
      // A failed download (urlSource below) says what failed in its message; any other failure is a file's.
      const failed = error as Error & { download?: boolean };
      const problem = failed.download === true ? failed.message : readProblem(error);
      if (problem === undefined) throw error;
      problems.push({ file: source.name, message: problem });
    }
  }
  if (problems.length > 0) return { load: null, problems };
  // A stale mirror or an old file given by mistake would take back what a newer load said (entries CISA added, newer
  // scores) from every tenant: it is refused unless asked for. Checked inside the load's transaction, against the load
  // that committed last, so two loads at once cannot both pass it.
  const older = (loaded: FeedStatus[]) => {
    const found: FeedProblem[] = [];
    for (const data of feeds) {
      const before = loaded.find((f) => f.feed === data.feed);
      if (before === undefined || !isOlderFeed(data.version, before.version)) continue;
      found.push({
        file: data.source,
        message:
          `is ${feedWord(data.feed)} ${data.version}, older than the ${before.version} loaded at ${before.loadedAt}` +
          `${before.source === null ? '' : ` from ${before.source}`}: give --allow-older to load it anyway`,
      });
    }
    if (found.length > 0) throw Object.assign(new Error('an older feed'), { olderFeeds: found });
  };
  try {
    const load = await storage.loadFeeds(feeds, now().toISOString(), allowOlder ? undefined : older, onWait, onPhase);
    return { load, problems: [] };
  } catch (error) {
    const found = (error as { olderFeeds?: FeedProblem[] }).olderFeeds;
    if (found === undefined) throw error;
    return { load: null, problems: found };
  }
}

/** A feed at an address, downloaded as it is read; a failed request is a problem naming the address. */
export function urlSource(url: string, timeoutMs: number): FeedSource {
  return {
    name: url,
    open: () => {
      const body = (async function* () {
        let response: Response;
        try {
          response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), redirect: 'follow' });
        } catch (error) {
          const { cause, message } = error as { cause?: { code?: string; message?: string }; message: string };
          const why = cause?.code ?? cause?.message ?? message;
          throw Object.assign(new Error(`cannot download: ${why}`), { download: true });
        }
        if (!response.ok || response.body === null)
          throw Object.assign(new Error(`cannot download: HTTP ${response.status}`), { download: true });
        for await (const chunk of response.body as AsyncIterable<Uint8Array>) yield Buffer.from(chunk);
      })();
      return Readable.from(body);
    },
  };
}
