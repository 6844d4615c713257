// `secinv ingest --tenant ID FILE…`: scanner reports, SBOMs and VEX into one tenant (src/cli/ingest.ts).
import { loadConfig } from '../../config.js';
import { providers } from '../../domain/enums.js';
import { ingestFormats } from '../../input/formats.js';
import type { IngestFlags } from '../ingest.js';
import {
  boolean,
  choice,
  database,
  defineCommand,
  files,
  negated,
  quiet,
  required,
  text,
  type FlagsOf,
} from '../command.js';

const flags = {
  tenant: required('--tenant <tenantId>', 'the tenant the reports are about'),
  db: database,
  format: choice('--format <format>', 'the report format', ['auto', ...ingestFormats], 'auto'),
  asset: text(
    '--asset <assetId>',
    'attach the scan to this existing asset (file system, repository and VM scans need it)',
  ),
  provider: choice('--provider <provider>', 'the cloud of an image whose registry does not tell it', providers),
  region: text(
    '--region <region>',
    'the region of an image whose registry does not tell it, or of a Kubernetes cluster',
  ),
  cluster: text(
    '--cluster <name>',
    'the cluster of a Kubernetes report that does not name it (trivy-operator reports)',
  ),
  integration: text('--integration <uuid>', 'the integration (a UUID) the scanned assets and findings belong to'),
  resolve: negated('--no-resolve', 'add and update findings but resolve none (partial scans)'),
  dryRun: boolean('--dry-run', 'validate only, write nothing', false),
  quiet,
} satisfies FlagsOf<IngestFlags>;

export default defineCommand('ingest', {
  description:
    'Load scanner reports (Trivy or Grype JSON, Prowler OCSF), CycloneDX SBOMs and VEX, OpenVEX into one tenant; "-" reads standard input, gzip and UTF-16 are read as such. All or nothing.',
  arguments: { files: files('report files') },
  flags,
  action: async ({ files, ...flags }, { io, hooks }) => {
    const config = loadConfig(flags);
    hooks.bulkWriteStarting?.(config.databaseUrl);
    return (await import('../ingest.js')).ingestCommand(config, files, flags, io);
  },
});
