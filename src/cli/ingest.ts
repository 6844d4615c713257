import type { Config } from '../config.js';
import { UserError } from '../domain/errors.js';
import type { Provider } from '../domain/enums.js';
import { ingestFiles } from '../ingest/ingest.js';
import type { IngestFormat } from '../input/formats.js';
import { openDatabase, waitingFor, type Io } from './io.js';
import { countedFile, startProgress } from './progress.js';

/** What `secinv ingest` is given (its flags are declared in src/cli/commands/ingest.ts, which checks they agree). */
export interface IngestFlags {
  tenant: string;
  db: string | undefined;
  format: IngestFormat | 'auto';
  asset: string | undefined;
  provider: Provider | undefined;
  region: string | undefined;
  cluster: string | undefined;
  integration: string | undefined;
  resolve: boolean;
  dryRun: boolean;
  quiet: true | undefined;
}

export async function ingestCommand(
  config: Readonly<Config>,
  files: string[],
  flags: IngestFlags,
  io: Io,
): Promise<void> {
  const storage = await openDatabase(config.databaseUrl, io);
  const progress = startProgress(io, { quiet: flags.quiet });
  try {
    const result = await ingestFiles(
      storage,
      files.map((file) => ({ name: file === '-' ? '<stdin>' : file, open: countedFile(progress, file) })),
      {
        tenantId: flags.tenant,
        format: flags.format,
        assetId: flags.asset,
        provider: flags.provider,
        region: flags.region,
        cluster: flags.cluster,
        integrationId: flags.integration,
        resolve: flags.resolve,
        dryRun: flags.dryRun,
        onWait: waitingFor(io),
        // Each file is listed among the tenant's scans (GET /v1/tenant/scans), as an upload would be.
        recordScans: true,
      },
    );
    progress.stop();
    if (result.risks === null) {
      for (const p of result.problems) io.stderr.write(`${p.file}: ${p.path ? `${p.path}: ` : ''}${p.message}\n`);
      const n = result.problems.length;
      throw new UserError(`ingest rejected: ${n} problem${n === 1 ? '' : 's'}; nothing was written`);
    }
    for (const f of result.files) {
      const parts: string[] = [f.format];
      if (f.assetId === null && f.assets > 0)
        parts.push(`${f.assets} assets (${f.assetsCreated} created, ${f.assetsUnchanged} unchanged)`);
      if (f.assetId !== null)
        parts.push(`asset ${f.assetId} ${f.assetCreated ? 'created' : f.assetUnchanged ? 'unchanged' : 'updated'}`);
      // Prowler reports checks only; a vulnerability scanner's line says what happened to its findings.
      const checksOnly = f.format === 'prowler-ocsf';
      if (f.assets > 0 && !checksOnly)
        parts.push(`findings ${f.added} added, ${f.updated} updated, ${f.unchanged} unchanged, ${f.resolved} resolved`);
      if (checksOnly || f.checksFailed > 0 || f.checksResolved > 0)
        parts.push(`failed checks ${f.checksFailed} (${f.checksAdded} new), ${f.checksResolved} resolved`);
      if (f.vex !== null && (f.vex.statements > 0 || f.vex.unmatched > 0))
        parts.push(
          `VEX ${f.vex.documentId}: ${f.vex.statements} statements (${f.vex.exempting} exempting), ${f.vex.exemptions} exemptions, ${f.vex.unmatched} matching no asset`,
        );
      io.stderr.write(`${f.file}: ${parts.join(', ')}\n`);
      for (const warning of f.warnings) io.stderr.write(`${f.file}: warning: ${warning}\n`);
    }
    const { risks } = result;
    io.stderr.write(
      `risks: ${risks.risks} on the ${risks.assets} asset${risks.assets === 1 ? '' : 's'} written (${risks.added} new, ${risks.updated} changed, ${risks.removed} gone)\n`,
    );
    io.stdout.write(
      `${flags.dryRun ? 'validated (dry run, nothing written)' : 'ingested'}: ${result.files.length} file${result.files.length === 1 ? '' : 's'}\n`,
    );
  } finally {
    progress.stop();
    await storage.close();
  }
}
