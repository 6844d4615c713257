// What an ingest records of itself as scans (pipeline.md §2), inside its own transaction: the queued scan it applies
// ends `succeeded` with its summary and gate, or (`secinv ingest`) each file is written as a scan that succeeded. A
// `secinv ingest` run that was refused writes each file it refused as a scan that failed, with the problems it printed,
// once its write rolled back.
import { randomUUID } from 'node:crypto';
import { basename } from 'node:path';
import type { Provider } from '../domain/enums.js';
import { addSeverities, type ScanGate, type ScanProblem, type ScanSummary } from '../domain/scans.js';
import type { BulkWriter, ClaimedScan, RiskDerivation, ScanRecord, Storage, WaitReason } from '../storage/index.js';
import type { ApplyResult } from './apply.js';

/** What this file reads of an ingested file's summary (src/ingest/ingest.ts FileSummary). */
export interface ScanFile extends Pick<
  ApplyResult,
  'added' | 'addedBySeverity' | 'updated' | 'unchanged' | 'resolved' | 'checksFailed' | 'checksResolved'
> {
  file: string;
  format: string;
  assets: number;
  assetsCreated: number;
  assetsUnchanged: number;
  assetIds: string[];
  sizeBytes: number;
  sha256: string;
}

/** What this file reads of an ingest's options (src/ingest/ingest.ts ScanRunOptions). */
export interface ScanRunOptions {
  tenantId: string;
  format: string;
  provider?: Provider | undefined;
  region?: string | undefined;
  assetId?: string | undefined;
  cluster?: string | undefined;
  integrationId?: string | undefined;
  resolve: boolean;
  dryRun: boolean;
  scan?: ClaimedScan | undefined;
  recordScans?: boolean | undefined;
  onWait?: ((reason: WaitReason) => void) | undefined;
}

/** A file of a refused run, as far as it was read (src/ingest/ingest.ts). */
export interface RefusedFile {
  file: string;
  /** As detected; null when it was not (not a report, not readable). */
  format: string | null;
  sizeBytes: number;
  sha256: string;
  problems: { file: string; path: string | null; message: string }[];
}

/** `$.Results[0].Vulnerabilities` as a JSON Pointer: `/Results/0/Vulnerabilities`. */
export const jsonPointer = (path: string): string =>
  path
    .replace(/^\$/, '')
    .replace(/\[(\d+)\]/g, '.$1')
    .split('.')
    .filter((part) => part !== '')
    .map((part) => `/${part.replaceAll('~', '~0').replaceAll('/', '~1')}`)
    .join('');

/** A problem of the ingest as a scan lists it; `withFile`: naming the file as the command printed it. */
export const scanProblem = (
  problem: { file: string; path: string | null; message: string },
  withFile = false,
): ScanProblem => ({
  message: problem.message,
  ...(withFile ? { file: problem.file } : {}),
  ...(problem.path === null ? {} : { path: jsonPointer(problem.path) }),
});

/** Whether the run records itself as scans that succeed: a queued scan, or `secinv ingest`; never a dry run. */
export const recordsScans = (options: ScanRunOptions): boolean =>
  !options.dryRun && (options.scan !== undefined || options.recordScans === true);

/**
 * Exemptions the run made and removed: the tenant's before it and after it, compared. A scan can remove some: a VEX
 * document loaded again without a statement, or with one no longer exempting, and a scan after which a statement
 * matches no asset any more. An exemption whose document or assets changed is neither.
 */
async function exemptionChanges(
  writer: BulkWriter,
  tenantId: string,
  before: ReadonlySet<string>,
): Promise<ScanSummary['exemptions']> {
  const after = await writer.exemptionIds(tenantId);
  let added = 0;
  for (const id of after) if (!before.has(id)) added += 1;
  let removed = 0;
  for (const id of before) if (!after.has(id)) removed += 1;
  return { added, removed };
}

/**
 * A file's summary as the scan record says it; for a run of several files the risks and exemptions are the whole
 * run's.
 */
export function scanSummary(file: ScanFile, risks: RiskDerivation, exemptions: ScanSummary['exemptions']): ScanSummary {
  const updated = file.assets - file.assetsCreated - file.assetsUnchanged;
  return {
    assets: { created: file.assetsCreated, updated, unchanged: file.assetsUnchanged },
    findings: { added: file.added, updated: file.updated, unchanged: file.unchanged, resolved: file.resolved },
    exemptions,
    checks: { failed: file.checksFailed, passed: file.checksResolved },
    risks: { new: risks.added, changed: risks.updated, gone: risks.removed },
    assetIds: file.assetIds,
  };
}

async function gateOf(writer: BulkWriter, tenantId: string, file: ScanFile): Promise<ScanGate> {
  const open = await writer.openFindings(tenantId, file.assetIds);
  return { ...open, added: addSeverities([file.addedBySeverity]) };
}

/** The options a scan records: those of the run that were given. */
const recordedOptions = (options: ScanRunOptions): Record<string, unknown> =>
  Object.fromEntries(
    Object.entries({
      format: options.format,
      provider: options.provider,
      region: options.region,
      assetId: options.assetId,
      cluster: options.cluster,
      integrationId: options.integrationId,
      resolve: options.resolve,
    }).filter(([, value]) => value !== undefined),
  );

/** A file of a `secinv ingest` run as its scan: no key, named by the file, ended now; neither summary nor problems. */
const ingestScan = (
  file: { file: string; format: string | null; sizeBytes: number; sha256: string },
  options: ScanRunOptions,
  at: string,
): Omit<ScanRecord, 'status'> => ({
  id: randomUUID(),
  tenantId: options.tenantId,
  name: basename(file.file),
  format: file.format,
  options: recordedOptions(options),
  sizeBytes: file.sizeBytes,
  sha256: file.sha256,
  keyId: null,
  submittedAt: at,
  startedAt: at,
  finishedAt: new Date().toISOString(),
  summary: null,
  gate: null,
  problems: [],
});

export async function recordScans(
  writer: BulkWriter,
  files: readonly ScanFile[],
  risks: RiskDerivation,
  options: ScanRunOptions,
  at: string,
  exemptionsBefore: ReadonlySet<string> | undefined,
): Promise<void> {
  if (!recordsScans(options) || exemptionsBefore === undefined) return;
  const exemptions = await exemptionChanges(writer, options.tenantId, exemptionsBefore);
  if (options.scan !== undefined) {
    const [file] = files;
    if (file === undefined) throw new Error('a queued scan ingests one report');
    await writer.endScan({
      format: file.format,
      summary: scanSummary(file, risks, exemptions),
      gate: await gateOf(writer, options.tenantId, file),
    });
    return;
  }
  for (const file of files)
    await writer.recordScan({
      ...ingestScan(file, options, at),
      status: 'succeeded',
      summary: scanSummary(file, risks, exemptions),
      gate: await gateOf(writer, options.tenantId, file),
    });
}

/**
 * `secinv ingest` (not a dry run): each refused file as a scan that `failed`, with the problems the command prints,
 * in a small transaction of its own after the run's write rolled back, so that the list shows every run.
 */
export async function recordRefusedScans(
  storage: Storage,
  files: readonly RefusedFile[],
  options: ScanRunOptions,
  at: string,
): Promise<void> {
  if (options.dryRun || options.recordScans !== true || options.scan !== undefined) return;
  await storage.recordScans(
    files.map((file) => ({
      ...ingestScan(file, options, at),
      status: 'failed',
      problems: file.problems.map((problem) => scanProblem(problem, true)),
    })),
    options.onWait,
  );
}
