import type { Config } from '../config.js';
import { UserError } from '../domain/errors.js';
import { fileSource, importSources, summaryLine } from '../import/importer.js';
import { openStorage } from '../storage/index.js';
import type { Io } from './main.js';

export async function importCommand(config: Readonly<Config>, files: string[], dryRun: boolean, io: Io): Promise<void> {
  const storage = await openStorage(config.databaseUrl);
  try {
    const progress = io.stderr.isTTY === true;
    const started = Date.now();
    const result = await importSources(storage, files.map((f) => fileSource(f)), {
      dryRun,
      ...(progress ? { onProgress: (n: number) => io.stderr.write(`\rread ${n.toLocaleString('en-US')} records (${Math.round((Date.now() - started) / 1000)} s)`) } : {}),
    });
    if (progress) io.stderr.write('\r\x1b[K');
    if (result.problemCount > 0) {
      for (const p of result.problems) io.stderr.write(`${p.location}: ${p.path ? `${p.path}: ` : ''}${p.message}\n`);
      const shown = result.problemCount > result.problems.length ? ` (first ${result.problems.length} shown)` : '';
      throw new UserError(`import rejected: ${result.problemCount} problem${result.problemCount === 1 ? '' : 's'}${shown}; nothing was written`);
    }
    io.stdout.write(`${summaryLine(result, dryRun)} in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  } finally {
    await storage.close();
  }
}
