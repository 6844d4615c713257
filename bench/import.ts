// The benchmarks' import of a generated inventory, as `secinv generate | secinv import` runs it, with the CLI's own
// progress line on a terminal (records done of about how many, rate, time left) and nothing off one.
import { Readable } from 'node:stream';
import { startProgress } from '../src/cli/progress.js';
import { generateRecords, type GenerateOptions } from '../src/generate/generator.js';
import { importSources, type ImportResult } from '../src/import/importer.js';
import type { Storage } from '../src/storage/types.js';

export async function importGenerated(storage: Storage, options: GenerateOptions): Promise<ImportResult> {
  const progress = startProgress({ stdout: process.stdout, stderr: process.stderr }, { unit: 'records' });
  // About: the generator varies the findings per asset around the average.
  progress.next(
    'importing the generated inventory',
    options.tenants * (options.assets * (1 + options.findingsPerAsset) + options.risks),
  );
  let reported = 0;
  try {
    return await importSources(
      storage,
      [
        {
          name: '<generated>',
          open: () =>
            Readable.from(
              (function* () {
                for (const line of generateRecords(options)) yield `${line}\n`;
              })(),
            ),
        },
      ],
      {
        dryRun: false,
        onProgress: (n) => {
          progress.add(n - reported);
          reported = n;
        },
      },
    );
  } finally {
    progress.stop();
  }
}
