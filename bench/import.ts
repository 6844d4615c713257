// The benchmarks' import of a generated inventory, as `secinv generate > FILE; secinv import FILE` runs it: the records
// are written to a temporary file first (a large one is then read by the import's reading thread, docs/DESIGN.md §48),
// and only the import is timed. The CLI's own progress line shows on a terminal (records or bytes done, rate, time
// left) and nothing off one.
import { once } from 'node:events';
import { createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { countedSource } from '../src/cli/import.js';
import { startProgress } from '../src/cli/progress.js';
import { generateRecords, type GenerateOptions } from '../src/generate/generator.js';
import { importSources, type ImportResult } from '../src/import/importer.js';
import type { Storage } from '../src/storage/types.js';

/** Imports the generated inventory; `seconds` is the import's time alone, without the generation. */
export async function importGenerated(
  storage: Storage,
  options: GenerateOptions,
): Promise<ImportResult & { seconds: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'secinv-bench-import-'));
  const path = join(dir, 'generated.ndjson');
  const io = { stdout: process.stdout, stderr: process.stderr };
  const progress = startProgress(io, { unit: 'records' });
  const reading = startProgress(io);
  try {
    // About: the generator varies the findings per asset around the average.
    progress.next('generating', options.tenants * (options.assets * (1 + options.findingsPerAsset) + options.risks));
    const generating = performance.now();
    const out = createWriteStream(path);
    let lines = 0;
    for (const line of generateRecords(options)) {
      if (!out.write(`${line}\n`)) await once(out, 'drain');
      lines += 1;
      if (lines % 1000 === 0) progress.add(1000);
    }
    out.end();
    await once(out, 'finish');
    progress.stop();
    const mb = (statSync(path).size / 1e6).toFixed(0);
    process.stdout.write(
      `generated ${lines} records (${mb} MB) in ${((performance.now() - generating) / 1000).toFixed(1)} s\n`,
    );
    const started = performance.now();
    const result = await importSources(storage, [countedSource(reading, path)], {
      dryRun: false,
      onProgress: (records) => reading.records(records),
    });
    return { ...result, seconds: (performance.now() - started) / 1000 };
  } finally {
    progress.stop();
    reading.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
