// `secinv generate`: a deterministic inventory as NDJSON on stdout (src/cli/generate.ts, src/generate/).
import { defineCommand, integer, quiet, text } from '../command.js';

export default defineCommand('generate', {
  description: 'Write a deterministic generated inventory as NDJSON to stdout (streamed).',
  flags: {
    seed: text('--seed <seed>', 'seed of the generator', 'secinv'),
    tenants: integer('--tenants <n>', 'number of tenants', 1, 1),
    assets: integer('--assets <n>', 'assets per tenant', 0, 1000),
    findingsPerAsset: integer('--findings-per-asset <n>', 'average findings per asset', 0, 5),
    risks: integer('--risks <n>', 'risks per tenant', 0, 200),
    quiet,
  },
  action: async (flags, { io }) => (await import('../generate.js')).generateCommand(flags, io),
});
