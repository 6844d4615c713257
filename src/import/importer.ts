// `secinv import`: reads JSON bundles and NDJSON files (docs/IMPORT.md), validates every record, and writes them in one
// transaction. Any invalid record means nothing is written; every problem (up to 100) is reported with its location.
import { createReadStream, statSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { importKinds, type ImportKind, type RecordsByKind } from '../domain/records.js';
import type { BulkWriter, Storage, WaitReason } from '../storage/index.js';
import { bundleArrays, readSources, type ImportProblem, type ReadItem } from './reader.js';
import { readInThread, type ThreadFile } from './read-thread.js';

export type { ImportProblem } from './reader.js';

export const MAX_REPORTED_PROBLEMS = 100;

/**
 * Below this many bytes of files, an import reads on the writing thread. A reading thread takes ~0.35 s to start (most
 * of it loading the validation modules again), about what two cores save on 16 MiB of records.
 */
export const THREAD_MIN_BYTES = 64 << 20;

export interface ImportResult {
  counts: Record<ImportKind, number>;
  problems: ImportProblem[];
  /** Problems found in all, of which at most MAX_REPORTED_PROBLEMS are listed. */
  problemCount: number;
  written: boolean;
}

export interface ImportSource {
  name: string;
  open(): Readable;
  /** The source as a file of known size, which a reading thread may open itself. */
  file?: Omit<ThreadFile, 'name'> & { size: number };
}

const sizeOf = (path: string): number | undefined => {
  try {
    return statSync(path).size;
  } catch {
    return undefined;
  }
};

export const fileSource = (path: string, stdin: Readable = process.stdin): ImportSource => {
  if (path === '-') return { name: '<stdin>', open: () => stdin };
  const size = sizeOf(path);
  return { name: path, open: () => createReadStream(path), ...(size === undefined ? {} : { file: { path, size } }) };
};

export interface ImportOptions {
  dryRun: boolean;
  /** Called every so often with the number of records read so far (progress display). */
  onProgress?: (records: number) => void;
  /** Called at each point of the run (`record:N`, then the storage's: `read`, `settled`…), for fault tests. */
  onPhase?: ((phase: string) => void) | undefined;
  /** Called when the import waits for another write to commit: a feed load, another write to a tenant it writes. */
  onWait?: ((reason: WaitReason) => void) | undefined;
  /**
   * Whether the files are read in a thread of their own: by default when every source is a file and they hold at
   * least THREAD_MIN_BYTES.
   */
  readingThread?: boolean;
}

/** The files of the sources when a reading thread should read them, otherwise undefined. */
function threadFiles(sources: readonly ImportSource[], wanted: boolean | undefined): ThreadFile[] | undefined {
  if (wanted === false || !sources.every((s) => s.file !== undefined)) return undefined;
  const bytes = sources.reduce((sum, s) => sum + (s.file?.size ?? 0), 0);
  if (wanted !== true && bytes < THREAD_MIN_BYTES) return undefined;
  return sources.map(({ name, file }) => ({ ...(file as NonNullable<ImportSource['file']>), name }));
}

export async function importSources(
  storage: Storage,
  sources: ImportSource[],
  options: ImportOptions,
): Promise<ImportResult> {
  const counts = Object.fromEntries(importKinds.map((k) => [k, 0])) as Record<ImportKind, number>;
  const problems: ImportProblem[] = [];
  let problemCount = 0;
  const fail = (p: ImportProblem) => {
    problemCount += 1;
    if (problems.length < MAX_REPORTED_PROBLEMS) problems.push(p);
  };

  let written = false;
  await storage
    .bulkWrite(async (writer) => {
      const check = findingAssetCheck(writer, fail);
      let seen = 0;
      const sink = async (item: ReadItem): Promise<void> => {
        seen += 1;
        if (options.onProgress && seen % 1000 === 0) options.onProgress(seen);
        if ('problems' in item) {
          for (const problem of item.problems) fail(problem);
          return;
        }
        const { kind, value } = item;
        if (kind === 'vulnerability')
          await check.findingAsset(value as RecordsByKind['vulnerability'], item.location, item.assetPath);
        if (kind === 'asset') check.assetImported(value as RecordsByKind['asset']);
        counts[kind] += 1;
        // After the first problem nothing will be committed, and a dry run commits nothing: validate without writing.
        if (problemCount === 0 && !options.dryRun) await writer.write(kind, value);
        options.onPhase?.(`record:${seen}`);
      };
      const organizationOf = (tenantId: string) => writer.tenantOrganization(tenantId);
      const files = threadFiles(sources, options.readingThread);
      if (files === undefined) await readSources(sources, organizationOf, sink);
      else await readInThread(files, organizationOf, sink);
      check.finish();
      if (problemCount > 0) throw new ImportRejected();
      written = !options.dryRun;
    }, options)
    .catch((error: unknown) => {
      if (!(error instanceof ImportRejected)) throw error;
    });
  return { counts, problems, problemCount, written };
}

class ImportRejected extends Error {}

/** A finding's asset must be stored or in this import, possibly later in it. */
function findingAssetCheck(writer: BulkWriter, fail: (p: ImportProblem) => void) {
  const importedAssets = new Set<string>();
  const storedAssets = new Map<string, boolean>();
  const missingAssets = new Map<string, ImportProblem>();
  const assetKey = (tenantId: string, assetId: string) => `${tenantId}\u0000${assetId}`;

  return {
    assetImported(record: RecordsByKind['asset']): void {
      const key = assetKey(record.tenantId, record.asset.id);
      importedAssets.add(key);
      missingAssets.delete(key);
    },

    async findingAsset(record: RecordsByKind['vulnerability'], location: string, path: string): Promise<void> {
      const key = assetKey(record.tenantId, record.vulnerability.assetId);
      if (importedAssets.has(key)) return;
      let stored = storedAssets.get(key);
      if (stored === undefined) {
        stored = await writer.assetExists(record.tenantId, record.vulnerability.assetId);
        if (storedAssets.size > 10_000) storedAssets.clear();
        storedAssets.set(key, stored);
      }
      if (!stored && !missingAssets.has(key)) {
        missingAssets.set(key, {
          location,
          path,
          message: `asset '${record.vulnerability.assetId}' is not in tenant '${record.tenantId}'`,
        });
      }
    },

    finish(): void {
      for (const problem of missingAssets.values()) fail(problem);
    },
  };
}

const plurals = Object.fromEntries(Object.entries(bundleArrays).map(([plural, kind]) => [kind, plural])) as Record<
  ImportKind,
  string
>;

export const summaryLine = (result: ImportResult, dryRun: boolean): string => {
  const parts = importKinds.map((k) => `${result.counts[k]} ${plurals[k]}`);
  return `${dryRun ? 'validated (dry run, nothing written)' : 'imported'}: ${parts.join(', ')}`;
};
