// The large generated tenant of `npm run bench` and `npm run bench:console`: its command-line options, and the SQLite
// file under data/ both keep it in (so that one import serves both), unless --db names another database.
import { parseArgs } from 'node:util';
import type { GenerateOptions } from '../src/generate/generator.js';

export function largeTenant(defaultRuns: number, extra: { out?: { type: 'string' } } = {}) {
  const { values: args } = parseArgs({
    options: {
      assets: { type: 'string', default: '100000' },
      'findings-per-asset': { type: 'string', default: '10' },
      risks: { type: 'string', default: '50000' },
      runs: { type: 'string', default: String(defaultRuns) },
      db: { type: 'string' },
      ...extra,
    },
  });
  const options: GenerateOptions = {
    seed: 'bench',
    tenants: 1,
    assets: Number(args.assets),
    findingsPerAsset: Number(args['findings-per-asset']),
    risks: Number(args.risks),
  };
  const dbUrl = args.db ?? `sqlite:./data/bench-${options.assets}-${options.findingsPerAsset}-${options.risks}.db`;
  return { options, dbUrl, runs: Number(args.runs), out: (args as { out?: string }).out };
}
