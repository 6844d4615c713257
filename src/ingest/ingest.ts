// `secinv ingest`: scanner reports into one tenant, every file of a run in one transaction. Any problem in any file,
// or a dry run, writes nothing of the inventory (a refused run is listed among the scans: src/ingest/scan-record.ts);
// every problem names its file and, where there is one, the JSON path.
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { isUuid } from '../domain/ids.js';
import { addSeverities } from '../domain/scans.js';
import { UserError } from '../domain/errors.js';
import type { Provider } from '../domain/enums.js';
import type {
  ClaimedScan,
  RiskDerivation,
  StaleStatistics,
  Storage,
  VexDocumentMatch,
  WaitReason,
} from '../storage/index.js';
import { NO_DERIVATION } from '../storage/index.js';
import { detectFormat, type Detection } from '../input/detect.js';
import type { IngestFormat } from '../input/formats.js';
import { openReport, readProblem } from '../input/source.js';
import { replacingNulEscapes, type NulCount } from '../input/nul.js';
import { JsonStreamError } from '../input/stream.js';
import { applyScan, type ApplyResult } from './apply.js';
import { recordRefusedScans, recordScans, recordsScans, type RefusedFile } from './scan-record.js';
import { readGrype } from './grype.js';
import type { Ingested, Scan } from './scan.js';
import { readTrivy, type FieldProblem } from './trivy.js';
import { readCycloneDx } from './cyclonedx.js';
import { readOpenVex } from './openvex.js';
import { readTrivyKubernetes, type KubernetesOptions } from './kubernetes.js';
import { readTrivyOperator } from './trivy-operator.js';
import { readProwler } from './prowler.js';

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
  /** The cluster of a Kubernetes report that does not name it. */
  cluster?: string | undefined;
  integrationId?: string | undefined;
  resolve: boolean;
  dryRun: boolean;
  now?: () => Date;
  /** Called when the ingest waits for another write to commit: a feed load, another write to its tenant. */
  onWait?: ((reason: WaitReason) => void) | undefined;
  /** The queued scan this ingest applies (one source): ended `succeeded` in the ingest's transaction. */
  scan?: ClaimedScan | undefined;
  /** Record each file as a scan of its own (`secinv ingest`), in the ingest's transaction. */
  recordScans?: boolean | undefined;
  /** Called at each point of the write (BulkWriteOptions.onPhase), for fault tests. */
  onPhase?: ((phase: string) => void) | undefined;
  /** Takes the tables the write left with stale statistics instead of analysing them (BulkWriteOptions). */
  staleStatistics?: StaleStatistics | undefined;
  /** Findings of a scan kept as objects before the rest go to disk (default FINDINGS_IN_MEMORY, src/ingest/scan.ts). */
  findingsInMemory?: number | undefined;
}

export interface IngestProblem {
  file: string;
  path: string | null;
  message: string;
}

/** What a VEX document's statements did: counted after every file of the run was written. */
export interface VexSummary extends VexDocumentMatch {
  documentId: string;
}

export interface FileSummary extends Omit<ApplyResult, 'assetId'> {
  file: string;
  format: IngestFormat;
  /** The asset the file's findings are on; null for several (a Kubernetes report) or none (VEX statements only). */
  assetId: string | null;
  /** How many assets the file's scans were on, how many of them it created, and how many it left as they were. */
  assets: number;
  assetsCreated: number;
  assetsUnchanged: number;
  vex: VexSummary | null;
  /** What the reader skipped without failing the file (`3 findings without a resource uid were skipped`). */
  warnings: string[];
  /** Every asset the file's scans were on. */
  assetIds: string[];
  /** The file's bytes as read (decompressed): how many, and their SHA-256. */
  sizeBytes: number;
  sha256: string;
}

export type IngestResult =
  { files: FileSummary[]; problems: []; risks: RiskDerivation } | { files: []; problems: IngestProblem[]; risks: null };

interface ReadContext {
  fileName: string;
  cluster?: string | undefined;
  region?: string | undefined;
  findingsInMemory?: number | undefined;
}
type Reader = (bytes: AsyncIterable<Buffer>, problems: FieldProblem[], context: ReadContext) => Promise<Ingested>;
const scans =
  (
    read: (bytes: AsyncIterable<Buffer>, problems: FieldProblem[], options: KubernetesOptions) => Promise<Scan[]>,
  ): Reader =>
  async (bytes, problems, context) => ({ scans: await read(bytes, problems, context), vex: null, unmatchable: 0 });
const scanOnly =
  (
    read: (bytes: AsyncIterable<Buffer>, problems: FieldProblem[], findingsInMemory?: number) => Promise<Scan>,
  ): Reader =>
  async (bytes, problems, context) => ({
    scans: [await read(bytes, problems, context.findingsInMemory)],
    vex: null,
    unmatchable: 0,
  });

/** The reader of every format detection recognises. */
const READERS: Record<IngestFormat, Reader> = {
  trivy: scanOnly(readTrivy),
  grype: scanOnly(readGrype),
  'trivy-k8s': scans(readTrivyKubernetes),
  'trivy-operator': scans(readTrivyOperator),
  cyclonedx: (bytes, problems, context) => readCycloneDx(bytes, problems, context.fileName, context.findingsInMemory),
  openvex: (bytes, problems, context) => readOpenVex(bytes, problems, context.fileName),
  'prowler-ocsf': (bytes, problems, context) => readProwler(bytes, problems, context),
};

/** One line's worth of a file's scans: its asset when it has one, the sums of its findings. */
const summarize = (applied: readonly ApplyResult[]) => ({
  assetId: applied.length === 1 ? (applied[0]?.assetId ?? null) : null,
  assetIds: applied.map((a) => a.assetId),
  assets: applied.length,
  assetCreated: applied.some((a) => a.assetCreated),
  assetUnchanged: applied.length > 0 && applied.every((a) => a.assetUnchanged),
  assetsCreated: applied.filter((a) => a.assetCreated).length,
  assetsUnchanged: applied.filter((a) => a.assetUnchanged).length,
  added: applied.reduce((n, a) => n + a.added, 0),
  addedBySeverity: addSeverities(applied.map((a) => a.addedBySeverity)),
  updated: applied.reduce((n, a) => n + a.updated, 0),
  unchanged: applied.reduce((n, a) => n + a.unchanged, 0),
  resolved: applied.reduce((n, a) => n + a.resolved, 0),
  checksFailed: applied.reduce((n, a) => n + a.checksFailed, 0),
  checksAdded: applied.reduce((n, a) => n + a.checksAdded, 0),
  checksResolved: applied.reduce((n, a) => n + a.checksResolved, 0),
});

class Rejected extends Error {}

const nulWarning = (n: number): string =>
  `${n} NUL character${n === 1 ? '' : 's'} (U+0000) in the report's text ${n === 1 ? 'was' : 'were'} replaced by U+FFFD`;

/**
 * A format the user named is trusted, but Prowler's CSV and older JSON keep the advice detection gives them under
 * `--format prowler-ocsf` (a JSON parse error at line 1 would not say to ask Prowler for OCSF).
 */
function explicitFormat(format: IngestFormat, head: Buffer, complete: boolean): Detection {
  if (format !== 'prowler-ocsf') return { format };
  const byContent = detectFormat(head, complete);
  return 'problem' in byContent && byContent.otherProwlerOutput === true ? byContent : { format };
}

async function* hashing(
  bytes: AsyncIterable<Buffer>,
  hash: ReturnType<typeof createHash>,
  size: { bytes: number },
): AsyncGenerator<Buffer> {
  for await (const chunk of bytes) {
    hash.update(chunk);
    size.bytes += chunk.length;
    yield chunk;
  }
}

/** A file's bytes as they are read, counted and hashed: a refused file's scan records them too. */
function measuring() {
  const hash = createHash('sha256');
  const size = { bytes: 0 };
  let digest: string | undefined;
  let bytes: AsyncIterable<Buffer> | undefined;
  const digestOf = () => (digest ??= hash.digest('hex'));
  return {
    read: (report: AsyncIterable<Buffer>) => (bytes = hashing(report, hash, size)),
    size: () => size.bytes,
    digest: digestOf,
    /** The whole file's: what the reader left unread (detection refused it by its first bytes) is read first. */
    async whole(): Promise<{ sizeBytes: number; sha256: string }> {
      if (digest === undefined && bytes !== undefined)
        try {
          for await (const _ of bytes);
        } catch {
          // A read that fails ends it: the file's problem already says so.
        }
      return { sizeBytes: size.bytes, sha256: digestOf() };
    },
  };
}

export async function ingestFiles(
  storage: Storage,
  sources: readonly IngestSource[],
  options: IngestOptions,
): Promise<IngestResult> {
  // api.md types integrationId as a UUID; the findings and assets an ingest writes are served with this one.
  if (options.integrationId !== undefined && !isUuid(options.integrationId))
    throw new UserError(`--integration must be a UUID, not '${options.integrationId}'`);
  const problems: IngestProblem[] = [];
  const refused: RefusedFile[] = [];
  const files: FileSummary[] = [];
  const now = (options.now ?? (() => new Date()))().toISOString();
  let risks: RiskDerivation | undefined;
  try {
    await storage.bulkWrite(
      async (writer) => {
        const organizationId = await writer.tenantOrganization(options.tenantId);
        if (organizationId === undefined) {
          throw new UserError(`unknown tenant '${options.tenantId}' (create it with \`secinv tenants create\`)`);
        }
        // What the run's scans count as exemptions made and removed is measured against these.
        const exemptionsBefore = recordsScans(options) ? await writer.exemptionIds(options.tenantId) : undefined;
        for (const source of sources) {
          const fileProblems: IngestProblem[] = [];
          const fail = (message: string, path: string | null = null) =>
            fileProblems.push({ file: source.name, path, message });
          const measured = measuring();
          let format: IngestFormat | null = null;
          const readAndApply = async (): Promise<void> => {
            try {
              const report = await openReport(() => source.open());
              const bytes = measured.read(report.bytes);
              const detected =
                options.format === 'auto'
                  ? detectFormat(report.head, report.complete)
                  : explicitFormat(options.format, report.head, report.complete);
              if ('problem' in detected) {
                fail(detected.problem);
                return;
              }
              format = detected.format;
              const read = READERS[detected.format];
              const fieldProblems: FieldProblem[] = [];
              const nul: NulCount = { replaced: 0 };
              const ingested = await read(replacingNulEscapes(bytes, nul), fieldProblems, {
                fileName: source.name,
                cluster: options.cluster,
                region: options.region,
                findingsInMemory: options.findingsInMemory,
              });
              for (const p of fieldProblems) fail(p.message, p.path);
              if (fieldProblems.length > 0) {
                for (const scan of ingested.scans) scan.findings.close();
                return;
              }
              const { scans, vex } = ingested;
              // A VEX document names no asset of its own: its findings, if any, need one; its statements do not.
              const statementsOnly = (scan: Scan) =>
                vex !== null &&
                scan.findings.size === 0 &&
                scan.artifact.kind === 'other' &&
                options.assetId === undefined;
              const sha256 = measured.digest();
              const applied: ApplyResult[] = [];
              try {
                for (const scan of scans)
                  if (!statementsOnly(scan))
                    applied.push(await applyScan(writer, scan, sha256, { ...options, organizationId, now }));
              } finally {
                for (const scan of scans) scan.findings.close();
              }
              let unmatchable = ingested.unmatchable;
              if (vex !== null) {
                // A statement about the document's own subject is about the asset the document was attached to.
                const subject = applied[0]?.assetId ?? options.assetId;
                const statements = vex.statements.flatMap((s) => {
                  if (s.product.kind !== 'asset' || s.product.id !== '') return [s];
                  if (subject === undefined) {
                    unmatchable += 1;
                    return [];
                  }
                  return [{ ...s, product: { kind: 'asset' as const, id: subject } }];
                });
                await writer.replaceVexDocument(options.tenantId, { documentId: vex.documentId, statements });
              }
              files.push({
                file: source.name,
                format: detected.format,
                ...summarize(applied),
                vex:
                  vex === null
                    ? null
                    : {
                        documentId: vex.documentId,
                        statements: 0,
                        exempting: 0,
                        unmatched: unmatchable,
                        exemptions: 0,
                      },
                warnings: [...(nul.replaced > 0 ? [nulWarning(nul.replaced)] : []), ...(ingested.warnings ?? [])],
                sizeBytes: measured.size(),
                sha256,
              });
            } catch (error) {
              if (error instanceof JsonStreamError) fail(error.message);
              else if (error instanceof UserError) fail(error.message);
              else {
                const problem = readProblem(error);
                if (problem === undefined) throw error;
                fail(problem);
              }
            }
          };
          await readAndApply();
          if (fileProblems.length === 0) continue;
          problems.push(...fileProblems);
          refused.push({ file: source.name, format, ...(await measured.whole()), problems: fileProblems });
        }
        if (problems.length > 0) throw new Rejected();
        // Statements are matched once every file is written: a scan later in the run is matched too.
        if (files.some((f) => f.vex !== null)) {
          const matches = await writer.rematchVex(options.tenantId);
          for (const f of files) {
            const match = f.vex && matches.get(f.vex.documentId);
            if (f.vex && match)
              f.vex = { ...match, documentId: f.vex.documentId, unmatched: match.unmatched + f.vex.unmatched };
          }
        }
        // The risk rules run over the assets the run wrote, before a dry run rolls back: it reports them too.
        risks = await writer.derive();
        await recordScans(writer, files, risks, options, now, exemptionsBefore);
      },
      {
        dryRun: options.dryRun,
        deriveRisksAt: now,
        onWait: options.onWait,
        scan: options.scan,
        onPhase: options.onPhase,
        clock: options.now,
        staleStatistics: options.staleStatistics,
      },
    );
  } catch (error) {
    if (error instanceof Rejected) {
      await recordRefusedScans(storage, refused, options, now);
      return { files: [], problems, risks: null };
    }
    throw error;
  }
  return { files, problems: [], risks: risks ?? NO_DERIVATION };
}
