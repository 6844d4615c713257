// `secinv feeds load|update|status`: the threat-intel feeds shared by every tenant (src/feeds/, docs/FEEDS.md).
import type { Config } from '../config.js';
import { UserError } from '../domain/errors.js';
import type { FeedLoad } from '../domain/intel.js';
import { loadFeedFiles, urlSource, type FeedProblem } from '../feeds/load.js';
import { feedWord, type FeedSource } from '../feeds/read.js';
import { FEED_READERS, openDatabase, waitingFor, withDatabase, type Io } from './io.js';
import { countedFile, startProgress, type Progress } from './progress.js';
import type { FeedLoadPhase } from '../storage/index.js';
import { printTable } from './table.js';

function report(io: Io, outcome: { load: FeedLoad | null; problems: FeedProblem[] }): void {
  if (outcome.load === null) {
    for (const p of outcome.problems) io.stderr.write(`${p.file}: ${p.message}\n`);
    const n = outcome.problems.length;
    throw new UserError(`feeds rejected: ${n} problem${n === 1 ? '' : 's'}; nothing was written`);
  }
  for (const f of outcome.load.feeds) {
    io.stderr.write(
      `${f.source}: ${feedWord(f.feed)}${f.version === null ? '' : ` ${f.version}`}, ${f.entries} entries, ${f.changed} changed\n`,
    );
  }
  const n = outcome.load.feeds.length;
  const { risks } = outcome.load;
  io.stdout.write(
    `loaded: ${n} feed${n === 1 ? '' : 's'}; ${outcome.load.findingsUpdated} finding${outcome.load.findingsUpdated === 1 ? '' : 's'} re-enriched; risks: ${risks.added} new, ${risks.updated} changed, ${risks.removed} gone\n`,
  );
}

/** What the progress line calls each step of a load. */
const STEPS: Record<Exclude<FeedLoadPhase, 'done'>, string> = {
  storing: 'storing the feeds',
  enriching: 're-enriching findings',
  deriving: 'deriving risks',
  committing: 'committing',
  analyzing: 'updating statistics',
};

async function load(
  config: Readonly<Config>,
  sources: (progress: Progress) => FeedSource[],
  io: Io,
  { quiet = false, allowOlder = false }: { quiet?: boolean; allowOlder?: boolean },
) {
  const storage = await openDatabase(config.databaseUrl, io);
  const progress = startProgress(io, { quiet });
  try {
    const outcome = await loadFeedFiles(storage, sources(progress), {
      allowOlder,
      onWait: waitingFor(io, FEED_READERS),
      // Once the files are read, the line says which step the load is at, and for how long (stopped below).
      onPhase: (phase) => phase !== 'done' && progress.step(STEPS[phase]),
    });
    progress.stop();
    report(io, outcome);
  } finally {
    progress.stop();
    await storage.close();
  }
}

export const feedsLoad = (
  config: Readonly<Config>,
  files: string[],
  io: Io,
  opts: { quiet?: boolean; allowOlder?: boolean } = {},
): Promise<void> =>
  load(
    config,
    (progress) => files.map((file) => ({ name: file === '-' ? '<stdin>' : file, open: countedFile(progress, file) })),
    io,
    opts,
  );

/** What `secinv feeds update` is given (its flags are declared in src/cli/commands/feeds.ts, which checks they agree). */
export interface UpdateFlags {
  db: string | undefined;
  kevUrl: string;
  epssUrl: string;
  exploitdbUrl: string;
  timeout: number;
  allowOlder: boolean;
}

export const feedsUpdate = (config: Readonly<Config>, flags: UpdateFlags, io: Io): Promise<void> =>
  load(
    config,
    () => [flags.kevUrl, flags.epssUrl, flags.exploitdbUrl].map((url) => urlSource(url, flags.timeout * 1000)),
    io,
    { allowOlder: flags.allowOlder },
  );

export async function feedsStatus(config: Readonly<Config>, opts: { json: boolean }, io: Io): Promise<void> {
  const feeds = await withDatabase(config.databaseUrl, io, (storage) => storage.feedStatus());
  if (opts.json) {
    io.stdout.write(`${JSON.stringify(feeds, null, 2)}\n`);
    return;
  }
  if (feeds.length === 0) {
    io.stderr.write('no feed loaded yet: `secinv feeds load FILE...` or `secinv feeds update`\n');
    return;
  }
  printTable(
    io,
    ['FEED', 'VERSION', 'ENTRIES', 'LOADED AT', 'SOURCE'],
    feeds.map((f) => [f.feed, f.version ?? '-', String(f.entries), f.loadedAt, f.source ?? '-']),
  );
}
