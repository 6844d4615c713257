// Change log retention benchmark: Storage.pruneChanges (what `secinv serve`'s scan runner runs hourly) over a generated
// tenant whose import appended ~200,000 changes (10,000 assets, 19 findings each: one change per asset and finding),
// with a cutoff after all of them, so that every batch deletes a full 1000. Prints the changes deleted, the whole run's
// seconds, and the time of one batch (one transaction: read its positions, delete them, move the pruned position):
// median, 90th percentile and slowest. A write beside it waits for one batch at most (SQLite's write lock; on
// PostgreSQL only the tenant's row, held from the batch's last statement to its commit).
// Usage: npm run bench:changes [-- --db sqlite|postgres --assets N --findings-per-asset N]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { performance } from 'node:perf_hooks';
import { openStorage } from '../src/storage/index.js';
import { benchOptions, tenantDatabase } from './tenant.js';

const { values: args } = parseArgs({
  options: {
    db: { type: 'string', default: process.env.SECINV_BENCH_DB ?? 'sqlite' },
    assets: { type: 'string', default: '10000' },
    'findings-per-asset': { type: 'string', default: '19' },
  },
});

const dir = mkdtempSync(join(tmpdir(), 'secinv-bench-changes-'));
const database = await tenantDatabase(dir, {
  db: args.db,
  options: benchOptions(args.assets, args['findings-per-asset']),
  name: 'changes',
});
const storage = await openStorage(database.url);
try {
  // Asked before each batch: the time between two asks is one batch.
  const asked: number[] = [];
  const stopped = () => {
    asked.push(performance.now());
    return false;
  };
  const start = performance.now();
  const deleted = await storage.pruneChanges(new Date(Date.now() + 60_000).toISOString(), { stopped });
  const seconds = (performance.now() - start) / 1000;
  const batches = asked
    .slice(1)
    .map((at, i) => at - asked[i]!)
    .sort((a, b) => a - b);
  const at = (q: number) => batches[Math.min(batches.length - 1, Math.floor(q * batches.length))]!.toFixed(1);
  process.stdout.write(
    `${args.db}: ${deleted.toLocaleString('en-US')} changes deleted in ${seconds.toFixed(1)} s; ` +
      `${batches.length} full batches of 1000: median ${at(0.5)} ms, p90 ${at(0.9)} ms, slowest ${at(1)} ms\n`,
  );
} finally {
  await storage.close();
  await database.drop();
  rmSync(dir, { recursive: true, force: true });
}
