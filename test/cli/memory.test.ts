// The heap growth of an ingest or an import (src/cli/memory.ts) is set after start-up: it only works if this Node.js knows the flag and
// reads it at every collection. Each check runs in a Node.js process of its own, since the flag is process-wide.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { BULK_HEAP_GROWING_PERCENT, heapGrowingFlag } from '../../src/cli/memory.js';

const MEMORY = fileURLToPath(new URL('../../src/cli/memory.ts', import.meta.url));

// A steady live set (a ring of 300,000 small records, ~60 MB) replaced one record at a time, five times over: every
// record lives long enough to be promoted, then dies. Old-generation garbage at a constant live size, as an ingest
// makes it. Prints the largest old space seen, in MB. (A smaller live set stays under V8's initial limit, where the
// flag changes less.) The first argument is a database URL for boundBulkHeap; without one, V8's own growth.
const CHURN = `
import v8 from 'node:v8';
import { boundBulkHeap } from ${JSON.stringify(MEMORY)};
if (process.argv[1]) boundBulkHeap(process.argv[1]);
const ring = new Array(300_000);
const oldSpace = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'old_space').space_size;
let peak = 0;
for (let i = 0; i < 1_500_000; i += 1) {
  ring[i % ring.length] = { id: 'finding-' + i, packages: [{ name: 'p' + (i % 977), version: String(i) }] };
  if (i % 10_000 === 0) peak = Math.max(peak, oldSpace());
}
console.log(Math.round(peak / 1e6));
`;

const churn = (...databaseUrl: string[]) => {
  const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', CHURN, ...databaseUrl], {
    encoding: 'utf8',
  });
  return { status: run.status, stderr: run.stderr, peakMb: Number(run.stdout.trim()) };
};

describe('the heap growth of a bulk write', () => {
  it('is a flag this Node.js knows at start-up', () => {
    for (const percent of Object.values(BULK_HEAP_GROWING_PERCENT)) {
      const run = spawnSync(process.execPath, [heapGrowingFlag(percent), '-e', ''], { encoding: 'utf8' });
      expect(run.stderr).toBe('');
      expect(run.status).toBe(0);
    }
  });

  it('set after start-up for an ingest into either database, keeps the heap of a process making old garbage smaller', () => {
    const unbounded = churn();
    const postgres = churn('postgres://127.0.0.1:5432/secinv');
    const sqlite = churn('sqlite:/nonexistent/secinv.db');
    for (const run of [unbounded, postgres, sqlite]) {
      expect(run.stderr).toBe('');
      expect(run.status).toBe(0);
      expect(run.peakMb).toBeGreaterThan(0);
    }
    // 271–300 MB unbounded against 105 MB (SQLite) and 125–138 MB (PostgreSQL) on Node.js 20; the margin leaves room
    // for other versions' collectors.
    expect(sqlite.peakMb).toBeLessThan(unbounded.peakMb * 0.6);
    expect(postgres.peakMb).toBeLessThan(unbounded.peakMb * 0.6);
  }, 120_000);
});
