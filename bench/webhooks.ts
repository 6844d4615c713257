// Webhook deliveries (pipeline.md §5; docs/BENCHMARKS.md "Webhook delivery"): the built `secinv serve` over a database
// holding a generated tenant of 10,000 assets (bench/scans.ts's), a receiver on loopback in this process that answers
// 200 at once and notes when each delivery arrived, endpoints made by `secinv webhooks create`:
// (a) small scans (5 findings, each a new image) uploaded one after another by two clients, each waiting for its scan
//     to succeed: from each scan's commit to the arrival of the delivery holding its last change, p50 and p99. The
//     commit time is the changes' `at` (taken in the write's transaction, just before its commit: the latency is
//     if anything overstated), and also the scan's finishedAt;
// (b) a scan opening 200,000 findings, applied while its endpoint is disabled, then delivered once it is enabled, with
//     nothing else running: the server's CPU (user + system of the process and its threads, /proc/PID/stat) per 1,000
//     changes delivered, less what the idle server spent over as long (measured over 10 s just before, once the
//     server had settled after applying the scan);
// (c) another such scan delivered while a client in a process of its own reads asset pages one at a time: p50 and p99
//     of a page read during the delivery against the same client on the idle (settled) server just before.
// Usage: npm run bench:webhooks [-- --db sqlite|postgres --assets 10000 --scans 200 --findings 200000]
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { createTenantKey } from '../src/cli/keys.js';
import { openStorage } from '../src/storage/index.js';
import { startServeCommand } from './serve-command.js';
import { cpuSeconds, ended, latencies, quantile, startReader, stop, uploadFile, type Scan } from './serve-clients.js';
import { tenantDatabase } from './tenant.js';
import { writeTrivyReport } from './trivy-report.js';

const { values: args } = parseArgs({
  options: {
    db: { type: 'string', default: process.env.SECINV_BENCH_DB ?? 'sqlite' },
    assets: { type: 'string', default: '10000' },
    scans: { type: 'string', default: '200' },
    findings: { type: 'string', default: '200000' },
    'idle-s': { type: 'string', default: '15' },
  },
});
const ALLOW = { SECINV_WEBHOOK_ALLOW_PRIVATE: 'true' };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Delivery {
  arrivedAt: number;
  /** The server's CPU seconds when it arrived. */
  cpu: number;
  bytes: number;
  changes: { seq: string; at: string; scanId: string | null }[];
}

/** The receiver: every delivery to /NAME noted under NAME, answered 200 once its body is read. */
async function startReceiver(cpuOf: () => number) {
  const got = new Map<string, Delivery[]>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const arrivedAt = Date.now();
      const cpu = cpuOf();
      res.writeHead(200).end();
      const body = Buffer.concat(parts);
      const parsed = JSON.parse(body.toString()) as {
        changes?: { seq: string; at: string; cause: { scanId?: string } }[];
      };
      const changes = (parsed.changes ?? []).map((c) => ({ seq: c.seq, at: c.at, scanId: c.cause.scanId ?? null }));
      const name = req.url!.slice(1);
      got.set(name, [...(got.get(name) ?? []), { arrivedAt, cpu, bytes: body.length, changes }]);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: (name: string) => `http://127.0.0.1:${port}/${name}`,
    got: (name: string) => got.get(name) ?? [],
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
type Receiver = Awaited<ReturnType<typeof startReceiver>>;

const bin = fileURLToPath(new URL('../bin/secinv.js', import.meta.url));
/** `secinv webhooks …` on the database; its standard output. */
const cli = async (url: string, argv: string[]): Promise<string> =>
  (
    await promisify(execFile)(process.execPath, [bin, 'webhooks', ...argv, '--db', url], {
      env: { ...process.env, ...ALLOW },
    })
  ).stdout;

/** Waits until the endpoint received `count` changes in all, and then nothing for 2 s (a scan's few more changes). */
async function received(receiver: Receiver, name: string, count: number, timeoutMs = 600_000): Promise<Delivery[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const got = receiver.got(name);
    const quiet = Date.now() - (got.at(-1)?.arrivedAt ?? 0) > 2000;
    if (got.reduce((n, d) => n + d.changes.length, 0) >= count && quiet) return got;
    if (Date.now() > deadline) throw new Error(`${name}: ${got.length} deliveries only`);
    await sleep(20);
  }
}

/** (a): small scans, each a new image: commit → arrival. */
async function smallScans(base: string, key: string, db: string, receiver: Receiver, work: string): Promise<string[]> {
  const id = (await cli(db, ['create', '--tenant', tenantId, '--url', receiver.url('small')])).trim().split('\n')[0]!;
  const template = join(work, 'small.json');
  await writeTrivyReport(template, { app: 'hook', digit: 'd', findings: 5, shape: 'full' });
  const text = readFileSync(template, 'utf8');
  const count = Number(args.scans);
  const scans: Scan[] = [];
  let next = 0;
  const client = async () => {
    for (let i = next++; i < count; i = next++) {
      const file = join(work, `small-${i}.json`);
      const digest = i.toString(16).padStart(64, '0');
      writeFileSync(file, text.replaceAll('d'.repeat(64), digest).replaceAll('bench/hook', `bench/hook${i}`));
      const location = await uploadFile(base, key, file, `provider=AWS&region=us-east-1&name=hook-${i}`);
      scans.push(await ended(base, key, location, 20));
    }
  };
  await Promise.all([client(), client()]);
  // Each scan's last change: by the `at` the log gave it, and by the scan's finishedAt.
  const last = new Map<string, { seq: number; at: string }>();
  for (const scan of scans) last.set(scan.id, { seq: -1, at: '' });
  const deadline = Date.now() + 60_000;
  let fromAt: number[] = [];
  let fromFinished: number[] = [];
  const arrival = new Map<string, number>();
  for (let seen = 0; ;) {
    const got = receiver.got('small');
    for (const d of got.slice(seen))
      for (const c of d.changes)
        if (c.scanId !== null && last.has(c.scanId) && Number(c.seq) > last.get(c.scanId)!.seq) {
          last.set(c.scanId, { seq: Number(c.seq), at: c.at });
          arrival.set(c.scanId, d.arrivedAt);
        }
    seen = got.length;
    if (scans.every((s) => arrival.has(s.id)) || Date.now() > deadline) {
      fromAt = scans.filter((s) => arrival.has(s.id)).map((s) => arrival.get(s.id)! - Date.parse(last.get(s.id)!.at));
      fromFinished = scans.filter((s) => arrival.has(s.id)).map((s) => arrival.get(s.id)! - Date.parse(s.finishedAt!));
      break;
    }
    await sleep(100);
  }
  await cli(db, ['disable', id]);
  const got = receiver.got('small');
  const changes = got.reduce((n, d) => n + d.changes.length, 0);
  const summary = (xs: number[]) =>
    `p50 ${quantile(xs, 0.5).toFixed(0)} ms, **p99 ${quantile(xs, 0.99).toFixed(0)} ms**, slowest ${Math.max(...xs).toFixed(0)} ms`;
  return [
    `- (a) ${count} scans of 5 findings (each a new image), two clients uploading one after another, ` +
      `${fromAt.length} of them delivered (${got.length} deliveries, ${changes} changes): from the changes' \`at\` to ` +
      `the arrival ${summary(fromAt)}; from the scan's finishedAt ${summary(fromFinished)}`,
  ];
}

/**
 * Waits until the server is idle: under 0.05 CPU s/s over 2 s (after a large scan it goes on working for a while: its
 * statistics, the write-ahead log), 120 s at most; resolves with that rate.
 */
async function settled(pid: number): Promise<number> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const [cpu, at] = [cpuSeconds(pid), Date.now()];
    await sleep(2000);
    const rate = (cpuSeconds(pid) - cpu) / ((Date.now() - at) / 1000);
    if (rate < 0.05 || Date.now() > deadline) return rate;
  }
}

/** Applies a large scan while the endpoint is disabled; resolves once it succeeded. */
async function appliedWhileDisabled(base: string, key: string, db: string, id: string, file: string, name: string) {
  await cli(db, ['disable', id]);
  const location = await uploadFile(base, key, file, `provider=AWS&region=us-east-1&name=${name}`);
  return ended(base, key, location, 500);
}

/** Enables the endpoint and waits for `count` changes more than it had; the CPU and times of the delivery. */
async function delivered(db: string, receiver: Receiver, id: string, pid: number, count: number) {
  const before = receiver.got('bulk').length;
  const had = receiver.got('bulk').reduce((n, d) => n + d.changes.length, 0);
  const cpu = cpuSeconds(pid);
  const startedAt = Date.now();
  await cli(db, ['enable', id]);
  const got = (await received(receiver, 'bulk', had + count)).slice(before);
  const last = got.at(-1)!;
  const changes = got.reduce((n, d) => n + d.changes.length, 0);
  const bytes = got.reduce((n, d) => n + d.bytes, 0);
  return { got, startedAt, first: got[0]!.arrivedAt, last: last.arrivedAt, cpu: last.cpu - cpu, changes, bytes };
}

/** (b) and (c): large scans delivered in batches. */
async function largeScans(base: string, pid: number, key: string, db: string, receiver: Receiver, work: string) {
  const findings = Number(args.findings);
  const files = [join(work, 'large-a.json'), join(work, 'large-b.json')];
  await writeTrivyReport(files[0]!, { app: 'bulk-a', digit: 'a', findings, shape: 'lean' });
  await writeTrivyReport(files[1]!, { app: 'bulk-b', digit: 'b', findings, shape: 'lean' });
  const id = (await cli(db, ['create', '--tenant', tenantId, '--url', receiver.url('bulk')])).trim().split('\n')[0]!;
  const lines: string[] = [];

  // (b): the idle server's CPU over 10 s, then the delivery alone.
  await appliedWhileDisabled(base, key, db, id, files[0]!, 'bulk-a');
  await settled(pid);
  const idle0 = cpuSeconds(pid);
  const idleStart = Date.now();
  await sleep(10_000);
  const idleRate = (cpuSeconds(pid) - idle0) / ((Date.now() - idleStart) / 1000);
  const b = await delivered(db, receiver, id, pid, findings);
  const seconds = (b.last - b.startedAt) / 1000;
  const net = b.cpu - idleRate * seconds;
  lines.push(
    `- (b) a scan opening ${findings.toLocaleString('en-US')} findings, delivered alone after its endpoint was ` +
      `enabled: ${b.changes.toLocaleString('en-US')} changes in ${b.got.length} deliveries ` +
      `(${(b.bytes / 1e6).toFixed(0)} MB), the first ${((b.first - b.startedAt) / 1000).toFixed(1)} s after the ` +
      `enable, the last ${seconds.toFixed(1)} s after it (${Math.round(b.changes / ((b.last - b.first) / 1000)).toLocaleString('en-US')} ` +
      `changes/s between them); the server's CPU ${b.cpu.toFixed(1)} s, of which ${(idleRate * seconds).toFixed(1)} s ` +
      `its idle rate (${idleRate.toFixed(3)} CPU s/s) would spend: **${((net / b.changes) * 1000 * 1000).toFixed(0)} ms ` +
      `of CPU per 1,000 changes delivered** (${((b.cpu / b.changes) * 1e6).toFixed(0)} ms gross)`,
  );

  // (c): page reads on the idle server, then during the delivery.
  await appliedWhileDisabled(base, key, db, id, files[1]!, 'bulk-b');
  await settled(pid);
  const reader = startReader(base, key);
  await reader.ready;
  const readyAt = Date.now();
  await sleep(Number(args['idle-s']) * 1000);
  const c = await delivered(db, receiver, id, pid, findings);
  await reader.stop();
  const idle = reader.between(readyAt, c.startedAt);
  const during = reader.between(c.first, c.last);
  lines.push(
    `- (c) asset pages one at a time (\`/v1/tenant/assets?page=1…100\`, each built): idle ${latencies(idle)}; ` +
      `**while ${c.changes.toLocaleString('en-US')} changes were delivered** (${((c.last - c.first) / 1000).toFixed(1)} s) ` +
      `${latencies(during)}: p99 ${(quantile(during, 0.99) / quantile(idle, 0.99)).toFixed(2)}× idle`,
  );
  return lines;
}

let tenantId = '';

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'secinv-bench-webhooks-'));
  const options = { seed: 'bench', tenants: 1, assets: Number(args.assets), findingsPerAsset: 10, risks: 0 };
  // The tenant of bench/scans.ts: on SQLite the same kept file serves both.
  const database = await tenantDatabase(work, { db: args.db, options, name: 'scans' });
  try {
    const storage = await openStorage(database.url);
    const [tenant] = await storage.listTenants();
    tenantId = tenant!.tenantId;
    const { key } = await createTenantKey(storage, tenantId, 'bench', undefined, undefined, ['read', 'ingest']);
    await storage.close();
    const { child, port } = await startServeCommand(database.url, { ...ALLOW, SECINV_KEPT_BODIES_MB: '0' });
    const pid = child.pid!;
    const receiver = await startReceiver(() => cpuSeconds(pid));
    const base = `http://127.0.0.1:${port}`;
    let lines: string[];
    try {
      lines = [
        ...(await smallScans(base, key, database.url, receiver, work)),
        ...(await largeScans(base, pid, key, database.url, receiver, work)),
      ];
    } finally {
      await stop(child);
      await receiver.close();
    }
    const report = [`### ${args.db}, ${new Date().toISOString().slice(0, 10)}`, '', ...lines, ''].join('\n');
    process.stdout.write(`${report}\n`);
    mkdirSync('docs/bench', { recursive: true });
    writeFileSync(`docs/bench/webhooks-${args.db}.md`, `# Webhook delivery (${args.db})\n\n${report}`);
  } finally {
    await database.drop();
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
