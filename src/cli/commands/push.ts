// `secinv push FILE… --url URL`: upload scanner reports to a running server with an ingest key, the CI gate
// (src/cli/push.ts, pipeline.md §3).
import { CLIENT_SETTINGS } from '../../config.js';
import { providers } from '../../domain/enums.js';
import { ingestFormats } from '../../input/formats.js';
import type { PushFlags } from '../push.js';
import {
  boolean,
  choice,
  defineCommand,
  files,
  negated,
  settingFlag,
  text,
  timeoutSeconds,
  type FlagsOf,
} from '../command.js';

const flags = {
  url: settingFlag(CLIENT_SETTINGS.url),
  key: settingFlag(CLIENT_SETTINGS.key),
  profile: settingFlag(CLIENT_SETTINGS.profile),
  format: choice('--format <format>', 'the report format', ['auto', ...ingestFormats], 'auto'),
  asset: text('--asset <assetId>', 'attach the scan to this existing asset (file system, repository and VM scans)'),
  provider: choice('--provider <provider>', 'the cloud of an image whose registry does not tell it', providers),
  region: text('--region <region>', 'the region of an image whose registry does not tell it, or of a cluster'),
  cluster: text('--cluster <name>', 'the cluster of a Kubernetes report that does not name it'),
  integration: text('--integration <uuid>', 'the integration (a UUID) the scanned assets and findings belong to'),
  resolve: negated('--no-resolve', 'add and update findings but resolve none (partial scans)'),
  wait: boolean('--wait', 'wait for each scan to end and print its summary'),
  timeout: timeoutSeconds('give up on the server (and, waiting, on the scans) after this long: exit 4', 600),
  failOn: text(
    '--fail-on <rules>',
    'exit 1 when a scan hits a rule: open:SEVERITY, added:SEVERITY, kev, exploit (comma list; implies --wait)',
  ),
} satisfies FlagsOf<PushFlags>;

export default defineCommand('push', {
  description:
    'Upload scanner reports to a running server (a key with the ingest scope); with --wait or --fail-on, wait for them and gate on what they found. Exit 0 ok, 1 a rule hit, 2 usage, 3 a scan failed, 4 server unreachable or timed out.',
  arguments: { files: files('report files') },
  flags,
  action: async ({ files, ...flags }, { io }) => (await import('../push.js')).pushCommand(files, flags, io),
});
