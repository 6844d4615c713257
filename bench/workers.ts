// Requests per second of the built `secinv serve` with 1 and with 2 serving processes (docs/BENCHMARKS.md "Serving
// processes", docs/DESIGN.md §112), for two rows of "Requests against the ceiling": the filtered asset page with a new
// riskScoreGte each request (its count never cached) and one asset by id. The settings alternate within each round, the
// order reversed every other round. Nothing is pinned: two processes need both cores, so wrk shares them; the CPU per
// request is the serve's, its primary and serving processes together (user + system from /proc, every thread).
// Usage: npm run bench:workers [-- --db sqlite|postgres --assets 10000 --duration 10 --rounds 2 --connections 32
// --workers 1,2]. Needs wrk (Debian: apt-get install wrk).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createTenantKey } from '../src/cli/keys.js';
import { openStorage } from '../src/storage/index.js';
import { FILTERED_PAGE, parseWrk, uncachedScript, type Measured } from './http-rows.js';
import { cpuSeconds, stop } from './serve-clients.js';
import { startServeCommand } from './serve-command.js';
import { tenantDatabase } from './tenant.js';

const { values: args } = parseArgs({
  options: {
    db: { type: 'string', default: process.env.SECINV_BENCH_DB ?? 'sqlite' },
    assets: { type: 'string', default: '10000' },
    duration: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '2' },
    connections: { type: 'string', default: '32' },
    workers: { type: 'string', default: '1,2' },
  },
});

/** The process and every process it started (the serving processes of a primary). */
const family = (pid: number): number[] => {
  const children = `/proc/${pid}/task/${pid}/children`;
  const listed = existsSync(children) ? readFileSync(children, 'utf8').trim() : '';
  return [pid, ...listed.split(' ').filter(Boolean).map(Number)];
};
const familyCpu = (pid: number) => family(pid).reduce((sum, p) => sum + cpuSeconds(p), 0);

function wrk(port: number, pid: number, path: string, auth: string, script?: string): Measured {
  const flags = ['-t1', `-c${args.connections}`, `-d${args.duration}s`, '--timeout', '30s', '--latency'];
  flags.push('-H', `authorization: ${auth}`);
  if (script !== undefined) flags.push('-s', script);
  const before = familyCpu(pid);
  const output = execFileSync('wrk', [...flags, `http://127.0.0.1:${port}${path}`]).toString();
  return { ...parseWrk(output), cpu: familyCpu(pid) - before };
}

/** A GET on a connection of its own: the primary hands each new connection to the next serving process. */
const status = (port: number, path: string, auth: string) =>
  new Promise<number>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent: false, headers: { authorization: auth } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });

/** Each row asked of every serving process, which then reads its count columns. */
async function warm(port: number, auth: string, paths: string[]): Promise<void> {
  for (let i = 0; i < 8; i += 1) {
    for (const path of paths) {
      const code = await status(port, path, auth);
      if (code !== 200) throw new Error(`${path}: ${code}`);
    }
  }
  // The count columns are read a second after a version's first count (src/storage/read/assets/counts.ts).
  await new Promise((resolve) => setTimeout(resolve, 5000));
}

interface Result {
  row: string;
  workers: number;
  round: number;
  measured: Measured;
}

async function measure(url: string, work: string): Promise<Result[]> {
  const storage = await openStorage(url);
  const [tenant] = await storage.listTenants();
  const { key } = await createTenantKey(storage, tenant!.tenantId, 'bench');
  await storage.close();
  const auth = `Bearer ${key}`;
  const counts = args.workers.split(',').map(Number);
  const results: Result[] = [];
  let assetPath: string | undefined;
  for (let round = 1; round <= Number(args.rounds); round += 1) {
    for (const workers of round % 2 === 1 ? counts : [...counts].reverse()) {
      const server = await startServeCommand(url, { SECINV_WORKERS: String(workers) });
      try {
        if (assetPath === undefined) {
          const first = await fetch(`http://127.0.0.1:${server.port}/v1/tenant/assets?perPage=1&sortBy=name`, {
            headers: { authorization: auth },
          });
          const id = ((await first.json()) as { data: { id: string }[] }).data[0]!.id;
          assetPath = `/v1/tenant/assets/${encodeURIComponent(id)}`;
        }
        await warm(server.port, auth, [FILTERED_PAGE, assetPath]);
        const rows = [
          { row: 'assets, 2 filters + sort, new riskScoreGte each request', path: FILTERED_PAGE, uncached: true },
          { row: 'get one asset', path: assetPath, uncached: false },
        ];
        for (const { row, path, uncached } of rows) {
          const script = uncached ? uncachedScript(work, path) : undefined;
          const measured = wrk(server.port, server.child.pid!, path, auth, script);
          results.push({ row, workers, round, measured });
          process.stdout.write(
            `round ${round}, --workers ${workers}, ${row}: ${measured.rps.toFixed(0)} req/s, ` +
              `${((measured.cpu * 1000) / measured.requests).toFixed(2)} ms CPU a request, p99 ${measured.p99Ms} ms, ` +
              `${measured.non2xx} non-2xx, ${measured.timeouts} timeouts (load ${readFileSync('/proc/loadavg', 'utf8').split(' ')[0]})\n`,
          );
        }
      } finally {
        await stop(server.child);
      }
    }
  }
  return results;
}

function report(results: Result[]): string[] {
  const lines = [
    `### ${args.db}, ${Number(args.assets).toLocaleString('en-US')} assets`,
    '',
    `wrk -t1 -c${args.connections} -d${args.duration}s, nothing pinned; ${args.rounds} rounds, the settings alternated ` +
      'in each, the order reversed every other round. CPU per request: the serve, every process and thread of it.',
    '',
    '| row | --workers | round | req/s | CPU per request | p99 | 4xx/5xx, timeouts |',
    '|---|---|---|---|---|---|---|',
  ];
  for (const { row, workers, round, measured: m } of [...results].sort(
    (a, b) => a.row.localeCompare(b.row) || a.workers - b.workers || a.round - b.round,
  )) {
    lines.push(
      `| ${row} | ${workers} | ${round} | ${m.rps.toFixed(0)} | ${((m.cpu * 1000) / m.requests).toFixed(2)} ms | ` +
        `${m.p99Ms.toFixed(0)} ms | ${m.non2xx}, ${m.timeouts} |`,
    );
  }
  return [...lines, ''];
}

const work = mkdtempSync(join(tmpdir(), 'secinv-bench-workers-'));
const assets = Number(args.assets);
const options = { seed: 'bench', tenants: 1, assets, findingsPerAsset: 10, risks: assets / 2 };
// The tenant of bench:http, kept under data/ on SQLite as it keeps it.
const database = await tenantDatabase(work, { db: args.db, options, name: 'http', keep: true });
try {
  const lines = report(await measure(database.url, work));
  process.stdout.write(`${lines.join('\n')}\n`);
  mkdirSync('docs/bench', { recursive: true });
  writeFileSync(`docs/bench/workers-${args.db}.md`, `# Serving processes (${args.db})\n\n${lines.join('\n')}\n`);
} finally {
  await database.drop();
  rmSync(work, { recursive: true, force: true });
}
