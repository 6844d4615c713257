// `secinv feeds load|update|status`: the threat-intel feeds shared by every tenant (src/cli/feeds.ts).
import { loadConfig } from '../../config.js';
import { FEED_URLS } from '../../feeds/urls.js';
import type { UpdateFlags } from '../feeds.js';
import {
  boolean,
  database,
  defineCommand,
  defineGroup,
  files,
  integer,
  json,
  quiet,
  text,
  type FlagsOf,
} from '../command.js';

const allowOlder = boolean('--allow-older', 'load a file older than the feed loaded (refused otherwise)', false);

const load = defineCommand('load', {
  description:
    'Load KEV JSON, EPSS CSV and Exploit-DB CSV files (kind told by content, gzip accepted) and re-enrich every tenant. All or nothing.',
  arguments: { files: files('feed files') },
  flags: { db: database, quiet, allowOlder },
  action: async ({ files, ...flags }, { io }) =>
    (await import('../feeds.js')).feedsLoad(loadConfig(flags), files, io, flags),
});

const updateFlags = {
  db: database,
  kevUrl: text('--kev-url <url>', 'CISA KEV catalog JSON', FEED_URLS.kev),
  epssUrl: text('--epss-url <url>', 'FIRST EPSS scores CSV (gzip)', FEED_URLS.epss),
  exploitdbUrl: text('--exploitdb-url <url>', 'Exploit-DB files_exploits.csv', FEED_URLS.exploitdb),
  timeout: integer('--timeout <seconds>', 'give up on a download after this long', 1, 300),
  allowOlder,
} satisfies FlagsOf<UpdateFlags>;

const update = defineCommand('update', {
  description: 'Download the three feeds from their public addresses and load them. All or nothing.',
  flags: updateFlags,
  action: async (flags, { io }) => (await import('../feeds.js')).feedsUpdate(loadConfig(flags), flags, io),
});

const status = defineCommand('status', {
  description: 'Each loaded feed: version or date, entries, when and from where it was loaded.',
  flags: { json, db: database },
  action: async (flags, { io }) => (await import('../feeds.js')).feedsStatus(loadConfig(flags), flags, io),
});

export default defineGroup('feeds', 'Load the threat-intel feeds (CISA KEV, FIRST EPSS, Exploit-DB).', [
  load,
  update,
  status,
]);
