// Throughput against the machine's ceiling: the rows of docs/BENCHMARKS.md "Requests against the ceiling". The API
// server runs in a process of its own pinned to core 0 (`taskset -c 0`), wrk runs on core 1 with 32 connections, and
// a bare `node:http` server sending the same bytes from a Buffer, pinned the same way, gives the ceiling in the same
// round. Per row: requests per second, the server's CPU per request (user + system from /proc, every thread), p99,
// non-2xx answers and the ratio to the ceiling. Then the first request after a restart of `secinv serve` itself, the
// built command a deployment runs (bin/secinv.js), pinned the same way.
// Usage: npm run bench:http [-- --db sqlite|postgres --assets 10000,100000 --duration 10 --runs 3 --connections 32]
// Needs wrk (Debian: apt-get install wrk) and taskset.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { buildApp, defaultHttpOptions } from '../src/app.js';
import { createTenantKey } from '../src/cli/keys.js';
import { openStorage } from '../src/storage/index.js';
import { tenantDatabase } from './tenant.js';
import { FILTERED_PAGE, parseWrk, wrkFlags, rowsOf, uncachedScript, type Measured } from './http-rows.js';
import { cpuSeconds, stop } from './serve-clients.js';
import { listening, startServeCommand } from './serve-command.js';

const { values: args } = parseArgs({
  options: {
    db: { type: 'string', default: process.env.SECINV_BENCH_DB ?? 'sqlite' },
    assets: { type: 'string', default: '10000,100000' },
    duration: { type: 'string', default: '10' },
    runs: { type: 'string', default: '3' },
    connections: { type: 'string', default: '32' },
    serve: { type: 'string' }, // internal: the API server over this database URL
    built: { type: 'boolean', default: false }, // internal: with --serve, keep no bodies (rows marked `built`)
    ceiling: { type: 'string' }, // internal: the bare server over the bodies in this folder
  },
});

const here = fileURLToPath(import.meta.url);

/**
 * The API server: the app through the API role (as `secinv serve` reads), no rate limit; prints its port. `built`:
 * no bodies kept by tag, so every request builds its body.
 */
async function serve(url: string, built: boolean): Promise<void> {
  const storage = await openStorage(url, { role: 'api' });
  const { compression } = defaultHttpOptions;
  const app = await buildApp({
    storage,
    http: { rateLimitPerMinute: 0, compression: built ? { ...compression, cacheBytes: 0 } : compression },
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  process.stdout.write(`port ${typeof address === 'object' && address ? address.port : 0}\n`);
}

/** The ceiling: `GET /<n>` sends body n of the folder from a Buffer, with the same content type as the API. */
async function ceiling(folder: string): Promise<void> {
  const bodies = new Map(readdirSync(folder).map((name) => [`/${name}`, readFileSync(join(folder, name))]));
  const server = createServer((req, res) => {
    const body = bodies.get(req.url ?? '');
    res.writeHead(body ? 200 : 404, { 'content-type': 'application/json; charset=utf-8' });
    res.end(body);
  });
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    process.stdout.write(`port ${typeof address === 'object' && address ? address.port : 0}\n`);
  });
}

/** Starts `secinv serve` from the built modules on core 0, as a deployment restarts it (the first request is timed). */
const startCommand = (url: string) => startServeCommand(url, {}, ['taskset', '-c', '0']);

/** Starts this file in a mode of its own on core 0 and waits for the port it prints. */
function start(
  mode: 'serve' | 'ceiling',
  value: string,
  extra: string[] = [],
): Promise<{ child: ChildProcess; port: number }> {
  const argv = [process.execPath, '--import', 'tsx', here, `--${mode}`, value, ...extra];
  const child = spawn('taskset', ['-c', '0', ...argv], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return listening(child, child.stdout, /port (\d+)/, mode);
}

/** One wrk run against a port; the server's CPU is read around it. */
function wrk(port: number, pid: number, path: string, headers: Record<string, string>, script?: string): Measured {
  const flags = wrkFlags(args.connections, args.duration);
  for (const [name, value] of Object.entries(headers)) flags.push('-H', `${name}: ${value}`);
  if (script !== undefined) flags.push('-s', script);
  const before = cpuSeconds(pid);
  const output = execFileSync('taskset', [...flags, `http://127.0.0.1:${port}${path}`]).toString();
  return { ...parseWrk(output), cpu: cpuSeconds(pid) - before };
}

async function fetchBody(port: number, path: string, headers: Record<string, string>) {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { headers });
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return { body: Buffer.from(await res.arrayBuffer()), etag: res.headers.get('etag') ?? '' };
}

async function measure(dbUrl: string, assets: number, work: string): Promise<string[]> {
  const storage = await openStorage(dbUrl);
  const [tenant] = await storage.listTenants();
  const { key } = await createTenantKey(storage, tenant!.tenantId, 'bench');
  await storage.close();
  const auth = { authorization: `Bearer ${key}` };
  let server = await start('serve', dbUrl);
  const page = FILTERED_PAGE;
  const first = await fetchBody(server.port, '/v1/tenant/assets?perPage=1&sortBy=name', auth);
  const assetId = (JSON.parse(first.body.toString()) as { data: { id: string }[] }).data[0]!.id;
  const plan = rowsOf(page, assetId, assets);
  // The bodies the ceiling sends: each row's own bytes (identity), fetched once from the API.
  const bodies = join(work, 'bodies');
  mkdirSync(bodies, { recursive: true });
  const etags = new Map<string, string>();
  for (const [i, row] of plan.entries()) {
    const fetched = await fetchBody(server.port, row.ceilingOf ?? row.path, auth);
    writeFileSync(join(bodies, String(i)), fetched.body);
    etags.set(row.path, fetched.etag);
  }
  const script = uncachedScript(work, page);
  const ceil = await start('ceiling', bodies);
  const built = await start('serve', dbUrl, ['--built']);
  const results = plan.map(() => ({ api: [] as Measured[], ceiling: [] as Measured[] }));
  for (let round = 0; round < Number(args.runs); round += 1) {
    for (const [i, row] of plan.entries()) {
      const headers = { ...auth, ...row.headers, ...(row.revalidate ? { 'if-none-match': etags.get(row.path)! } : {}) };
      const { port, child } = row.built ? built : server;
      results[i]!.api.push(wrk(port, child.pid!, row.path, headers, row.uncached ? script : undefined));
      results[i]!.ceiling.push(wrk(ceil.port, ceil.child.pid!, `/${i}`, {}));
    }
  }
  await stop(ceil.child);
  await stop(built.child);
  // The first request after a restart, with the operating system's cache of the database dropped where allowed.
  await stop(server.child);
  let dropped = false;
  try {
    execFileSync('sh', ['-c', 'sync && echo 3 > /proc/sys/vm/drop_caches'], { stdio: 'ignore' });
    dropped = true;
  } catch {
    // Not permitted here (a container without the right): the restart is measured with a warm cache.
  }
  const restarted = performance.now();
  server = await startCommand(dbUrl);
  const listening = performance.now();
  await fetchBody(server.port, page, auth);
  const restart = { start: listening - restarted, first: performance.now() - listening };
  await stop(server.child);
  return report(assets, plan, results, restart, dropped);
}

function report(
  assets: number,
  plan: ReturnType<typeof rowsOf>,
  results: { api: Measured[]; ceiling: Measured[] }[],
  restart: { start: number; first: number },
  dropped: boolean,
): string[] {
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
  const lines = [
    `### ${args.db}, ${assets.toLocaleString('en-US')} assets`,
    '',
    `wrk -t1 -c${args.connections} -d${args.duration}s, ${args.runs} rounds, medians; server and ceiling on core 0, wrk on core 1.`,
    '',
    '| row | req/s | CPU per request | p99 | 4xx/5xx, timeouts | ceiling req/s | × ceiling | target |',
    '|---|---|---|---|---|---|---|---|',
  ];
  const rate = plan.map((_, i) => median(results[i]!.api.map((m) => m.rps)));
  for (const [i, row] of plan.entries()) {
    const { api, ceiling: c } = results[i]!;
    const rps = rate[i]!;
    const cpuMs = median(api.map((m) => (m.requests > 0 ? (m.cpu * 1000) / m.requests : 0)));
    const ceilingRps = median(c.map((m) => m.rps));
    lines.push(
      `| ${row.label} | ${rps.toFixed(0)} | ${cpuMs.toFixed(2)} ms | ${median(api.map((m) => m.p99Ms)).toFixed(0)} ms | ` +
        `${api.reduce((a, m) => a + m.non2xx, 0)}, ${api.reduce((a, m) => a + m.timeouts, 0)} | ${ceilingRps.toFixed(0)} | ${(rps / ceilingRps).toFixed(3)}× | ${row.target} |`,
    );
  }
  const page1 = rate[plan.findIndex((r) => r.label.startsWith('assets page 1 '))] ?? 0;
  const deep = rate[plan.findIndex((r) => r.label.includes('(the last)'))] ?? 0;
  lines.push(
    '',
    `- The last page costs ${(page1 / deep).toFixed(2)}× page 1 (target ≤ 2×).`,
    `- First request after a restart: ${restart.first.toFixed(0)} ms once the server listens, ${restart.start.toFixed(0)} ms ` +
      `from the start of \`secinv serve\` (built) to listening; ${dropped ? 'the operating system cache was dropped first' : 'the operating system cache could not be dropped here, so warm'} (target ≤ 1 s).`,
    '',
  );
  return lines;
}

if (args.serve !== undefined) await serve(args.serve, args.built);
else if (args.ceiling !== undefined) await ceiling(args.ceiling);
else {
  const out: string[] = [];
  for (const assets of args.assets.split(',').map(Number)) {
    const work = mkdtempSync(join(tmpdir(), 'secinv-bench-http-'));
    const options = { seed: 'bench', tenants: 1, assets, findingsPerAsset: 10, risks: assets / 2 };
    const database = await tenantDatabase(work, { db: args.db, options, name: 'http' });
    try {
      const lines = await measure(database.url, assets, work);
      process.stdout.write(`${lines.join('\n')}\n`);
      out.push(...lines);
    } finally {
      await database.drop();
      rmSync(work, { recursive: true, force: true });
    }
  }
  mkdirSync('docs/bench', { recursive: true });
  writeFileSync(`docs/bench/http-${args.db}.md`, `# Requests against the ceiling (${args.db})\n\n${out.join('\n')}\n`);
}
