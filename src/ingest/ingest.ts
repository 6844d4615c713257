// `secinv ingest`: scanner reports into one tenant, every file of a run in one transaction. Any problem in any file,
// or a dry run, writes nothing; every problem names its file and, where there is one, the JSON path.
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { UserError } from '../domain/errors.js';
import type { Provider } from '../domain/enums.js';
import type { Storage } from '../storage/index.js';
import { applyScan, type ApplyResult } from './apply.js';
import { detectFormat, type IngestFormat } from './detect.js';
import { openReport } from './source.js';
import { JsonStreamError } from './stream.js';
import { readGrype } from './grype.js';
import type { Scan } from './scan.js';
import { readTrivy, type FieldProblem } from './trivy.js';

export interface IngestSource {
  name: string;
  open(): Readable;
}

export interface IngestOptions {
  tenantId: string;
  format: IngestFormat | 'auto';
  assetId?: string | undefined;
  provider?: Provider | undefined;
  region?: string | undefined;
  integrationId?: string | undefined;
  resolve: boolean;
  dryRun: boolean;
  now?: () => Date;
}

export interface IngestProblem {
  file: string;
  path: string | null;
  message: string;
}

export interface FileSummary extends ApplyResult {
  file: string;
  format: IngestFormat;
}

export type IngestResult = { files: FileSummary[]; problems: [] } | { files: []; problems: IngestProblem[] };

/** The readers of the formats this version reads; the others are recognised and named. */
const READERS: Partial<
  Record<IngestFormat, (bytes: AsyncIterable<Buffer>, problems: FieldProblem[]) => Promise<Scan>>
> = {
  trivy: readTrivy,
  grype: readGrype,
};

class Rejected extends Error {}

async function* hashing(bytes: AsyncIterable<Buffer>, hash: ReturnType<typeof createHash>): AsyncGenerator<Buffer> {
  for await (const chunk of bytes) {
    hash.update(chunk);
    yield chunk;
  }
}

export async function ingestFiles(
  storage: Storage,
  sources: readonly IngestSource[],
  options: IngestOptions,
): Promise<IngestResult> {
  const problems: IngestProblem[] = [];
  const files: FileSummary[] = [];
  const now = (options.now ?? (() => new Date()))().toISOString();
  try {
    await storage.ingest(
      async (writer) => {
        const organizationId = await writer.tenantOrganization(options.tenantId);
        if (organizationId === undefined) {
          throw new UserError(`unknown tenant '${options.tenantId}' (create it with \`secinv tenants create\`)`);
        }
        for (const source of sources) {
          const fail = (message: string, path: string | null = null) =>
            problems.push({ file: source.name, path, message });
          try {
            const report = await openReport(() => source.open());
            const detected =
              options.format === 'auto' ? detectFormat(report.head, report.complete) : { format: options.format };
            if ('problem' in detected) {
              fail(detected.problem);
              continue;
            }
            const read = READERS[detected.format];
            if (read === undefined) {
              fail(`is a ${detected.format} report; this version of secinv ingests Trivy and Grype JSON reports`);
              continue;
            }
            const hash = createHash('sha256');
            const fieldProblems: FieldProblem[] = [];
            const scan = await read(hashing(report.bytes, hash), fieldProblems);
            for (const p of fieldProblems) fail(p.message, p.path);
            if (fieldProblems.length > 0) continue;
            const applied = await applyScan(writer, scan, hash.digest('hex'), { ...options, organizationId, now });
            files.push({ file: source.name, format: detected.format, ...applied });
          } catch (error) {
            if (error instanceof JsonStreamError) fail(error.message);
            else if (error instanceof UserError) fail(error.message);
            else if (typeof (error as NodeJS.ErrnoException).syscall === 'string')
              fail(`cannot read: ${(error as NodeJS.ErrnoException).code}`);
            else if (/^Z_/.test(String((error as NodeJS.ErrnoException).code)))
              fail(`is not valid gzip: ${(error as Error).message}`);
            else throw error;
          }
        }
        if (problems.length > 0) throw new Rejected();
      },
      { dryRun: options.dryRun },
    );
  } catch (error) {
    if (error instanceof Rejected) return { files: [], problems };
    throw error;
  }
  return { files, problems: [] };
}
