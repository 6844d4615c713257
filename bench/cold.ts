// Requests no cache has seen: the rows of the performance issue's table, by its method. The tenant of "Requests
// against the ceiling" (10 findings per asset, half as many risks as assets); the API server, keeping no bodies (every
// request builds its answer), in a process of its own on core 0, wrk on core 1; each request a URL not asked before in
// its row. Per row: requests per second, CPU per request of the server plus, on PostgreSQL, of every postgres process
// (its backends), p50 and p99. Then one first request of a package filter on a server just started.
// Usage: npm run bench:cold [-- --db sqlite|postgres --assets 100000 --duration 10 --runs 2]
// Needs wrk (Debian: apt-get install wrk) and taskset.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createTenantKey } from '../src/cli/keys.js';
import { openStorage } from '../src/storage/index.js';
import { FILTERED_PAGE, parseWrk, wrkFlags } from './http-rows.js';
import { cpuSeconds, stop } from './serve-clients.js';
import { listening } from './serve-command.js';
import { tenantDatabase } from './tenant.js';

const { values: args } = parseArgs({
  options: {
    db: { type: 'string', default: process.env.SECINV_BENCH_DB ?? 'sqlite' },
    assets: { type: 'string', default: '100000' },
    duration: { type: 'string', default: '10' },
    runs: { type: 'string', default: '2' },
  },
});

const httpBench = fileURLToPath(new URL('./http.ts', import.meta.url));

/** The package filters of the package row: the packages of the generated catalogue with the most findings. */
const PACKAGES = [
  'openssl',
  'zlib',
  'libxml2',
  'libcurl',
  'expat',
  'systemd',
  'sudo',
  'openssh',
  'ncurses',
  'xz-utils',
];

/** The API server of bench/http.ts keeping no bodies (`--serve URL --built`), on core 0. */
function start(url: string): Promise<{ child: ChildProcess; port: number }> {
  const argv = [process.execPath, '--import', 'tsx', httpBench, '--serve', url, '--built'];
  const child = spawn('taskset', ['-c', '0', ...argv], { stdio: ['ignore', 'pipe', 'inherit'] });
  return listening(child, child.stdout, /port (\d+)/, 'serve');
}

/** CPU seconds of every `postgres` process now (0 on SQLite): the database server's share of a request. */
function postgresCpu(): number {
  if (args.db !== 'postgres') return 0;
  let total = 0;
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'postgres') total += cpuSeconds(Number(pid));
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return total;
}

interface Row {
  label: string;
  connections: number;
  /** The body of wrk's `request` function: returns `wrk.format(nil, path)`, a new path each call. */
  lua: string;
}

/** A Lua array literal of strings. */
const luaList = (items: string[]) => `{${items.map((s) => JSON.stringify(s)).join(',')}}`;

function rowsOf(ids: string[]): Row[] {
  return [
    {
      label: 'asset page, a new `riskScoreGte` each request (count + page)',
      connections: 32,
      lua: `n = n + 1\n  return wrk.format(nil, "${FILTERED_PAGE}&riskScoreGte=0." .. string.format("%012d", n))`,
    },
    {
      label: `one asset, ${ids.length.toLocaleString('en-US')} different ids`,
      connections: 32,
      lua: `n = n % #ids + 1\n  return wrk.format(nil, "/v1/tenant/assets/" .. ids[n])`,
    },
    {
      label: 'vulnerability page `page=N`, N over 1–5000',
      connections: 32,
      lua: 'n = n + 1\n  return wrk.format(nil, "/v1/tenant/vulnerabilities?page=" .. ((n * 2477) % 5000 + 1))',
    },
    {
      label: '`packageName` (10 packages × `perPage` 100–199), 4 connections',
      connections: 4,
      lua:
        'n = n + 1\n  return wrk.format(nil, "/v1/tenant/vulnerabilities?packageName=" .. packages[n % #packages + 1] ' +
        '.. "&perPage=" .. (100 + math.floor(n / #packages) % 100))',
    },
  ];
}

interface Measured {
  rps: number;
  cpuMs: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
}

function wrk(port: number, pid: number, row: Row, work: string, key: string, offset: number): Measured {
  const script = join(work, 'row.lua');
  // Each thread of wrk runs the script in its own state; `offset` keeps a later run from repeating an earlier one's URLs.
  writeFileSync(
    script,
    `ids = {}\nfor line in io.lines("${join(work, 'ids')}") do ids[#ids + 1] = line end\n` +
      `packages = ${luaList(PACKAGES)}\nlocal n = ${offset}\n` +
      `request = function()\n  ${row.lua}\nend\n`,
  );
  const flags = wrkFlags(row.connections, args.duration);
  flags.push('-H', `authorization: Bearer ${key}`, '-s', script, `http://127.0.0.1:${port}/`);
  const before = cpuSeconds(pid) + postgresCpu();
  const output = execFileSync('taskset', flags).toString();
  const cpu = cpuSeconds(pid) + postgresCpu() - before;
  const read = parseWrk(output);
  return {
    rps: read.rps,
    cpuMs: read.requests > 0 ? (cpu * 1000) / read.requests : 0,
    p50Ms: read.p50Ms,
    p99Ms: read.p99Ms,
    errors: read.non2xx + read.timeouts,
  };
}

/** Every asset id of the tenant, through the API (1,000 a page, by name). */
async function assetIds(port: number, key: string): Promise<string[]> {
  const ids: string[] = [];
  for (let page = 1; ; page += 1) {
    const res = await fetch(`http://127.0.0.1:${port}/v1/tenant/assets?perPage=1000&sortBy=name&page=${page}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    const body = (await res.json()) as { data: { id: string }[] };
    ids.push(...body.data.map((a) => a.id));
    if (body.data.length < 1000) return ids;
  }
}

/** The first package-filter request on a server just started (after one unrelated request): its time and CPU. */
async function firstPackageRequest(url: string, key: string) {
  const server = await start(url);
  const headers = { authorization: `Bearer ${key}` };
  await (await fetch(`http://127.0.0.1:${server.port}/v1/tenant/assets?perPage=1`, { headers })).arrayBuffer();
  const before = cpuSeconds(server.child.pid!) + postgresCpu();
  const started = performance.now();
  const res = await fetch(`http://127.0.0.1:${server.port}/v1/tenant/vulnerabilities?packageName=openssl&perPage=137`, {
    headers,
  });
  const body = (await res.json()) as { meta: { total: number } };
  const ms = performance.now() - started;
  const cpuMs = (cpuSeconds(server.child.pid!) + postgresCpu() - before) * 1000;
  await stop(server.child);
  return { ms, cpuMs, total: body.meta.total };
}

async function measure(url: string, work: string): Promise<string[]> {
  const storage = await openStorage(url);
  const [tenant] = await storage.listTenants();
  const { key } = await createTenantKey(storage, tenant!.tenantId, 'bench');
  await storage.close();
  const first = await firstPackageRequest(url, key);
  const server = await start(url);
  const ids = await assetIds(server.port, key);
  writeFileSync(join(work, 'ids'), `${ids.map(encodeURIComponent).join('\n')}\n`);
  const plan = rowsOf(ids);
  const results = plan.map(() => [] as Measured[]);
  for (let round = 0; round < Number(args.runs); round += 1)
    for (const [i, row] of plan.entries())
      results[i]!.push(wrk(server.port, server.child.pid!, row, work, key, round * 1_000_003));
  await stop(server.child);
  const mean = (xs: number[]) => xs.reduce((a, x) => a + x, 0) / Math.max(1, xs.length);
  const lines = [
    `### ${args.db}, ${ids.length.toLocaleString('en-US')} assets`,
    '',
    `wrk -t1 -d${args.duration}s, ${args.runs} rounds: the mean (each round in brackets); server on core 0, ` +
      `wrk on core 1; CPU per request: the server${args.db === 'postgres' ? ' and every postgres process' : ''}.`,
    '',
    '| row | req/s | CPU per request | p50 | p99 | errors |',
    '|---|---|---|---|---|---|',
  ];
  for (const [i, row] of plan.entries()) {
    const runs = results[i]!;
    const each = (pick: (m: Measured) => number, digits: number) =>
      `${mean(runs.map(pick)).toFixed(digits)} (${runs.map((m) => pick(m).toFixed(digits)).join(', ')})`;
    lines.push(
      `| ${row.label} | ${each((m) => m.rps, 0)} | ${each((m) => m.cpuMs, 3)} ms | ${each((m) => m.p50Ms, 1)} ms | ` +
        `${each((m) => m.p99Ms, 0)} ms | ${runs.reduce((a, m) => a + m.errors, 0)} |`,
    );
  }
  lines.push(
    `| one request \`packageName=openssl&perPage=137\` (${first.total.toLocaleString('en-US')} matches), first time | ` +
      `${first.ms.toFixed(0)} ms | ${first.cpuMs.toFixed(0)} ms | | | |`,
    '',
  );
  return lines;
}

const assets = Number(args.assets);
const work = mkdtempSync(join(tmpdir(), 'secinv-bench-cold-'));
const options = { seed: 'bench', tenants: 1, assets, findingsPerAsset: 10, risks: assets / 2 };
const database = await tenantDatabase(work, { db: args.db, options, name: 'http', keep: true });
try {
  const lines = await measure(database.url, work);
  process.stdout.write(`${lines.join('\n')}\n`);
  mkdirSync('docs/bench', { recursive: true });
  writeFileSync(`docs/bench/cold-${args.db}.md`, `# Requests no cache has seen (${args.db})\n\n${lines.join('\n')}\n`);
} finally {
  await database.drop();
  rmSync(work, { recursive: true, force: true });
}
