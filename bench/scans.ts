// Scans over HTTP: the rows of docs/BENCHMARKS.md "Scans over HTTP". The built `secinv serve` (bin/secinv.js) over a
// database holding a generated tenant of 10,000 assets, the bench its client on loopback, both on the machine's cores
// unpinned (the server's scan thread and the ingest's preparing thread need one each):
// (a) a 200,000-finding Trivy report (bench/ingest.ts's) uploaded from a file, upload to `succeeded`: findings/s;
// (d) 20 small reports pushed at once by one tenant's CI jobs, each uploaded and waited on as `secinv push --wait`
//     does (the typed client: looks 0.1, 0.3 and 0.7 s after the upload, then every 0.5 s): every one's time to
//     `succeeded`;
// then on a server started for them:
// (b) a report of about 1 GB (findings as Trivy writes them, bench/trivy-report.ts `full`) streamed from a file: the
//     server's peak RSS (the kernel's high-water mark, reset first) until its 202, then until it `succeeded`;
// (c) meanwhile, a client in a process of its own reading asset pages one at a time: p50, p99 and the slowest while
//     the upload streams and while the scan runs, and the same client on the idle server before.
// The server keeps no response bodies (SECINV_KEPT_BODIES_MB=0), so every page read is built from the database.
// Usage: npm run bench:scans [-- --db sqlite|postgres --findings 200000 --large-mb 1000 --jobs 20 --assets 10000]
// The reading client is bench/page-reader.ts (bench/serve-clients.ts).
import { type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createTenantKey } from '../src/cli/keys.js';
import { createClient } from '../src/client/index.js';
import { openStorage } from '../src/storage/index.js';
import { startServeCommand } from './serve-command.js';
import {
  cpuSeconds,
  ended,
  latencies,
  peakRss,
  quantile,
  resetPeak,
  startReader,
  stop,
  uploadFile,
} from './serve-clients.js';
import { tenantDatabase } from './tenant.js';
import { findingBytes, writeTrivyReport } from './trivy-report.js';

const { values: args } = parseArgs({
  options: {
    db: { type: 'string', default: process.env.SECINV_BENCH_DB ?? 'sqlite' },
    findings: { type: 'string', default: '200000' },
    'large-mb': { type: 'string', default: '1000' },
    jobs: { type: 'string', default: '20' },
    assets: { type: 'string', default: '10000' },
  },
});

/** The built `secinv serve`, keeping no bodies: every page read is built. */
async function serve(url: string): Promise<{ child: ChildProcess; base: string }> {
  const { child, port } = await startServeCommand(url, { SECINV_KEPT_BODIES_MB: '0' });
  return { child, base: `http://127.0.0.1:${port}` };
}

const seconds = (from: string | null, to: string | null) => (Date.parse(to!) - Date.parse(from!)) / 1000;

/** (a): one large report, upload to `succeeded`. */
async function largeReport(base: string, pid: number, key: string, file: string, findings: number): Promise<string> {
  const cpuBefore = cpuSeconds(pid);
  const started = Date.now();
  const location = await uploadFile(base, key, file, 'provider=AWS&region=us-east-1&name=200k');
  const uploaded = Date.now();
  const scan = await ended(base, key, location, 100);
  const total = (Date.now() - started) / 1000;
  return (
    `- (a) ${findings.toLocaleString('en-US')} findings (${(statSync(file).size / 1e6).toFixed(0)} MB), upload to ` +
    `\`succeeded\`: **${total.toFixed(1)} s, ${Math.round(findings / total).toLocaleString('en-US')} findings/s** ` +
    `(upload ${((uploaded - started) / 1000).toFixed(1)} s, applied in ${seconds(scan.startedAt, scan.finishedAt).toFixed(1)} s; ` +
    `the server's CPU ${(cpuSeconds(pid) - cpuBefore).toFixed(1)} s)`
  );
}

/** (d): small reports pushed at once, as CI jobs with `secinv push --wait`. */
async function ciJobs(base: string, key: string, report: Buffer, jobs: number): Promise<string> {
  const client = createClient({ baseUrl: base, apiKey: key });
  const runs = await Promise.all(
    Array.from({ length: jobs }, async (_, j) => {
      const started = Date.now();
      const queued = await client.scans.upload(report, { provider: 'AWS', region: `ci-${j}`, name: `job-${j}` });
      const done = await client.scans.wait(queued.id);
      if (done.status !== 'succeeded') throw new Error(`job ${j}: ${done.status}`);
      return { seconds: (Date.now() - started) / 1000, scan: done };
    }),
  );
  const scans = runs.map((run) => run.scan);
  const applied = scans.map((scan) => seconds(scan.startedAt, scan.finishedAt) * 1000);
  const first = Math.min(...scans.map((scan) => Date.parse(scan.submittedAt)));
  const last = Math.max(...scans.map((scan) => Date.parse(scan.finishedAt!)));
  return (
    `- (d) ${jobs} CI jobs of one tenant at once, each a ${(report.length / 1000).toFixed(0)} KB report of 50 findings, ` +
    `uploaded and waited on as \`secinv push --wait\` does (looks 0.1, 0.3, 0.7 s after the upload, then every 0.5 s): all succeeded; **the slowest in ` +
    `${Math.max(...runs.map((run) => run.seconds)).toFixed(1)} s**, the median ${quantile(
      runs.map((run) => run.seconds),
      0.5,
    ).toFixed(1)} s; the server applied them one after another, each in ${quantile(applied, 0.5).toFixed(0)} ms ` +
    `(median; slowest ${Math.max(...applied).toFixed(0)} ms), the first submitted to the last finished ` +
    `${((last - first) / 1000).toFixed(1)} s`
  );
}

/** (b) and (c): on a server of its own, the idle reads, then the reads while a very large report streams and runs. */
async function hugeReport(url: string, key: string, file: string, findings: number): Promise<string[]> {
  const server = await serve(url);
  const pid = server.child.pid!;
  try {
    const idle = startReader(server.base, key);
    await idle.ready;
    await new Promise((resolve) => setTimeout(resolve, 15_000));
    await idle.stop();
    const busy = startReader(server.base, key);
    await busy.ready;
    resetPeak(pid);
    const rssBefore = peakRss(pid);
    const cpuBefore = cpuSeconds(pid);
    const t0 = Date.now();
    const location = await uploadFile(server.base, key, file, 'provider=AWS&region=us-east-1&name=large');
    const t1 = Date.now();
    const peakUpload = peakRss(pid);
    const scan = await ended(server.base, key, location, 500);
    const t2 = Date.now();
    const peakScan = peakRss(pid);
    const cpu = cpuSeconds(pid) - cpuBefore;
    await busy.stop();
    const between = busy.between;
    return [
      `- (b) ${findings.toLocaleString('en-US')} findings, ${(statSync(file).size / 1e6).toFixed(0)} MB, on a server ` +
        `started for it (${rssBefore.toFixed(0)} MB resident before): upload ${((t1 - t0) / 1000).toFixed(1)} s, applied ` +
        `in ${seconds(scan.startedAt, scan.finishedAt).toFixed(1)} s (the server's CPU ${cpu.toFixed(1)} s, the reads' ` +
        `included); **peak RSS ${peakUpload.toFixed(0)} MB until the 202**, ${peakScan.toFixed(0)} MB until it succeeded`,
      `- (c) asset pages one at a time (\`/v1/tenant/assets?page=1…100\`, each built): idle ` +
        `${latencies(idle.samples.map((sample) => sample.ms))}; while the upload streamed ${latencies(between(t0, t1))}; ` +
        `**while the scan ran ${latencies(between(t1, t2))}**`,
    ];
  } finally {
    await stop(server.child);
  }
}

async function measure(url: string, work: string): Promise<string[]> {
  const storage = await openStorage(url);
  const [tenant] = await storage.listTenants();
  const { key } = await createTenantKey(storage, tenant!.tenantId, 'bench', undefined, undefined, ['read', 'ingest']);
  await storage.close();

  const findings = Number(args.findings);
  const lean = join(work, 'trivy-lean.json');
  await writeTrivyReport(lean, { app: 'app', digit: 'a', findings, shape: 'lean' });
  const hugeFindings = Math.floor((Number(args['large-mb']) * 1e6) / findingBytes('full'));
  const huge = join(work, 'trivy-huge.json');
  await writeTrivyReport(huge, { app: 'huge', digit: 'b', findings: hugeFindings, shape: 'full' });
  const small = join(work, 'trivy-small.json');
  await writeTrivyReport(small, { app: 'ci', digit: 'c', findings: 50, shape: 'full' });

  const lines: string[] = [];
  const server = await serve(url);
  try {
    lines.push(await largeReport(server.base, server.child.pid!, key, lean, findings));
    lines.push(await ciJobs(server.base, key, readFileSync(small), Number(args.jobs)));
  } finally {
    await stop(server.child);
  }
  lines.push(...(await hugeReport(url, key, huge, hugeFindings)));
  return lines;
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'secinv-bench-scans-'));
  const assets = Number(args.assets);
  const options = { seed: 'bench', tenants: 1, assets, findingsPerAsset: 10, risks: 0 };
  const database = await tenantDatabase(work, { db: args.db, options, name: 'scans' });
  try {
    const lines = [
      `### ${args.db}, ${new Date().toISOString().slice(0, 10)}`,
      '',
      ...(await measure(database.url, work)),
      '',
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
    mkdirSync('docs/bench', { recursive: true });
    writeFileSync(`docs/bench/scans-${args.db}.md`, `# Scans over HTTP (${args.db})\n\n${lines.join('\n')}\n`);
  } finally {
    await database.drop();
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
