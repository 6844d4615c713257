import { writeInventory } from '../generate/generator.js';
import type { Io } from './io.js';
import { startProgress } from './progress.js';

export async function generateCommand(
  opts: { seed: string; tenants: number; assets: number; findingsPerAsset: number; risks: number; quiet?: boolean },
  io: Io,
): Promise<void> {
  // The share is of the records the options ask for; findings per asset vary, so the total is about that.
  const progress = startProgress(io, { quiet: opts.quiet, unit: 'records' });
  progress.next('generate', opts.tenants * (opts.assets * (1 + opts.findingsPerAsset) + opts.risks));
  let written = 0;
  // A reader that stops early (`secinv generate | head`) closes the pipe: that ends the output, it is not a failure.
  const stopped = new Promise<void>((resolve, reject) => {
    io.stdout.once('error', (error: NodeJS.ErrnoException) => (error.code === 'EPIPE' ? resolve() : reject(error)));
  });
  await Promise.race([
    writeInventory(
      {
        seed: opts.seed,
        tenants: opts.tenants,
        assets: opts.assets,
        findingsPerAsset: opts.findingsPerAsset,
        risks: opts.risks,
      },
      io.stdout,
      (records) => {
        progress.add(records - written);
        written = records;
      },
    ),
    stopped,
  ]).finally(() => progress.stop());
}
