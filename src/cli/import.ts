import type { Config } from '../config.js';
import { UserError } from '../domain/errors.js';
import { fileSource, importSources, summaryLine, type ImportSource } from '../import/importer.js';
import { NoInventoryError, openStorage, type Storage } from '../storage/index.js';
import { openDatabase, waitingFor, type Io } from './io.js';
import { countedFile, startProgress, type Progress } from './progress.js';

/** A file to import, its bytes counted on the progress line by whichever thread reads it. */
export function countedSource(progress: Progress, file: string): ImportSource {
  const { name, file: known } = fileSource(file);
  const counted = known && {
    ...known,
    started: () => progress.next(name, known.size),
    read: (bytes: number) => progress.add(bytes),
  };
  return { name, open: countedFile(progress, file), ...(counted ? { file: counted } : {}) };
}

/**
 * A dry run writes nothing to disk: a database that does not exist yet is not created (the files are validated against
 * an empty inventory in memory), and an existing one is neither migrated nor written.
 */
async function openForImport(config: Readonly<Config>, dryRun: boolean, io: Io): Promise<Storage> {
  if (!dryRun) return openDatabase(config.databaseUrl, io);
  try {
    return await openDatabase(config.databaseUrl, io, { migrations: 'verify' });
  } catch (error) {
    if (!(error instanceof NoInventoryError)) throw error;
    io.stderr.write(`secinv: ${error.message}; validating against an empty inventory (dry run: nothing is created)\n`);
    return openStorage('sqlite::memory:');
  }
}

export async function importCommand(
  config: Readonly<Config>,
  files: string[],
  flags: { dryRun: boolean; quiet?: boolean },
  io: Io,
): Promise<void> {
  const { dryRun } = flags;
  const { importKillAt } = config;
  // A test's fault point (docs/RELIABILITY.md): the process dies there as a power cut or the OOM killer would kill it.
  const onPhase =
    importKillAt === undefined
      ? undefined
      : (phase: string) => void (phase === importKillAt && process.kill(process.pid, 'SIGKILL'));
  const storage = await openForImport(config, dryRun, io);
  onPhase?.('opened');
  const progress = startProgress(io, { quiet: flags.quiet });
  try {
    const started = Date.now();
    const result = await importSources(
      storage,
      files.map((file) => countedSource(progress, file)),
      { dryRun, onProgress: (n: number) => progress.records(n), onPhase, onWait: waitingFor(io) },
    );
    progress.stop();
    if (result.problemCount > 0) {
      for (const p of result.problems) io.stderr.write(`${p.location}: ${p.path ? `${p.path}: ` : ''}${p.message}\n`);
      const shown = result.problemCount > result.problems.length ? ` (first ${result.problems.length} shown)` : '';
      throw new UserError(
        `import rejected: ${result.problemCount} problem${result.problemCount === 1 ? '' : 's'}${shown}; nothing was written`,
      );
    }
    io.stdout.write(`${summaryLine(result, dryRun)} in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  } finally {
    progress.stop();
    await storage.close();
  }
}
