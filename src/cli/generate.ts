import { writeInventory } from '../generate/generator.js';
import type { Io } from './io.js';

export async function generateCommand(
  opts: { seed: string; tenants: number; assets: number; findingsPerAsset: number; risks: number },
  io: Io,
): Promise<void> {
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
    ),
    stopped,
  ]);
}
