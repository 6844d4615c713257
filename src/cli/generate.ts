import { writeInventory } from '../generate/generator.js';
import type { Io } from './main.js';

export async function generateCommand(opts: { seed: string; tenants: number; assets: number; findingsPerAsset: number; risks: number }, io: Io): Promise<void> {
  await writeInventory({ seed: opts.seed, tenants: opts.tenants, assets: opts.assets, findingsPerAsset: opts.findingsPerAsset, risks: opts.risks }, io.stdout);
}
