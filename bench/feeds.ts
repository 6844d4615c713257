// Feeds benchmark: `secinv feeds load` at full feed sizes (KEV ~1,500 entries, EPSS ~300,000 scores, Exploit-DB ~50,000
// rows) over a tenant of ~1,000,000 generated findings, through loadFeedFiles as the CLI calls it. Prints, per load, the
// seconds, the process's CPU seconds (on PostgreSQL the server's are not in them), rows, rows changed, findings
// re-enriched and the peak RSS; the seconds also split by step (the feeds stored and the findings re-enriched, the risks
// derived, the commit). Feed files go to a temporary folder.
// Usage: npm run bench:feeds [-- --db sqlite|postgres --assets N --findings-per-asset N] (or SECINV_BENCH_DB=postgres)
import { spawnSync } from 'node:child_process';
import { createReadStream, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { loadFeedFiles } from '../src/feeds/load.js';
import { ingestFiles } from '../src/ingest/ingest.js';
import { openStorage, type FeedLoadPhase, type Storage } from '../src/storage/index.js';
import { EDB, EPSS, KEV, KEV2, writeFeeds } from './feed-files.js';
import { benchOptions, tenantDatabase } from './tenant.js';

const { values: args } = parseArgs({
  options: {
    db: { type: 'string', default: process.env.SECINV_BENCH_DB ?? 'sqlite' },
    assets: { type: 'string', default: '100000' },
    'findings-per-asset': { type: 'string', default: '10' },
    measure: { type: 'string' }, // internal: the child process that times the loads, given the folder of the files
  },
});
const REPORT = '../test/fixtures/ingest/trivy/trivy-image-example-app-all-statuses.json';
const options = benchOptions(args.assets, args['findings-per-asset']);
const STEPS = [
  ['KEV', KEV],
  ['EPSS', EPSS],
  ['Exploit-DB', EDB],
  ['KEV again (same file)', KEV],
  ['KEV newer (50 entries changed or removed)', KEV2],
] as const;

/**
 * What one scanner report costs on an inventory this large, as a CI job that ingests each image's report pays it: an
 * 8-finding Trivy fixture ingested into the tenant, first as a new image, then again (its findings updated).
 */
async function smallIngests(storage: Storage): Promise<void> {
  const [tenant] = await storage.tenantSummaries();
  if (tenant === undefined) return;
  const report = fileURLToPath(new URL(REPORT, import.meta.url));
  process.stdout.write(`\n| ingest of ${basename(report)} (8 findings) | seconds |\n|---|---|\n`);
  for (const label of ['a new image', 'the same report again']) {
    const started = performance.now();
    const result = await ingestFiles(storage, [{ name: report, open: () => createReadStream(report) }], {
      tenantId: tenant.tenantId,
      format: 'auto',
      provider: 'AWS',
      region: 'us-east-1',
      resolve: true,
      dryRun: false,
    });
    if (result.problems.length > 0) throw new Error(JSON.stringify(result.problems));
    process.stdout.write(`| ${label} | ${((performance.now() - started) / 1000).toFixed(2)} |\n`);
  }
}

/**
 * The PostgreSQL server's version and memory and WAL settings, printed beside the figures so that each run says what
 * server it measured (4 GB of shared buffers instead of 128 MB moved these loads by less than their noise here).
 */
async function serverSettings(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const names = ['server_version', 'shared_buffers', 'max_wal_size', 'checkpoint_timeout', 'work_mem'];
    const { rows } = await client.query<{ name: string; value: string }>(
      'select name, current_setting(name) as value from unnest($1::text[]) as name',
      [names],
    );
    return `PostgreSQL ${rows.map((r) => `${r.name} ${r.value}`).join(', ')}`;
  } finally {
    await client.end();
  }
}

/** Times the loads, in a process of its own so that its peak RSS (maxRSS) is the loads' and not the import's. */
async function measure(dir: string): Promise<void> {
  type Run = { url: string; rows: Record<string, number> };
  const { url, rows } = JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8')) as Run;
  const storage = await openStorage(url);
  try {
    const findings = (await storage.tenantSummaries()).reduce((sum, t) => sum + t.findings, 0);
    process.stdout.write(`feeds ${storage.dialect}: ${findings.toLocaleString('en-US')} findings\n`);
    if (storage.dialect === 'postgres') process.stdout.write(`${await serverSettings(url)}\n`);
    process.stdout.write('\n');
    // CPU seconds (every thread of this process) beside the wall time: on a shared or throttled machine the wall time
    // of one load varied by a third between runs, its CPU much less.
    // The seconds split by step: storing the feeds and re-enriching the findings and their assets' fields, deriving the
    // risks (docs/RISKS.md), and committing and taking the statistics.
    const columns = ['load', 'seconds', 'feeds, findings', 'risks', 'commit', 'CPU seconds', 'rows in file'];
    const more = ['rows stored', 'rows changed', 'findings re-enriched', 'peak RSS'];
    process.stdout.write(`| ${[...columns, ...more].join(' | ')} |\n${'|---'.repeat(11)}|\n`);
    for (const [label, name] of STEPS) {
      const path = join(dir, name);
      const started = performance.now();
      const cpu = process.cpuUsage();
      // Each step's seconds, from its start to the next one's; reading the files counts with storing them and
      // re-enriching the findings, so that the three add up to the load.
      const steps = { findings: 0, risks: 0, commit: 0 };
      let current: keyof typeof steps | null = 'findings';
      let last = started;
      const onPhase = (phase: FeedLoadPhase) => {
        const now = performance.now();
        if (current !== null) steps[current] += (now - last) / 1000;
        const commit = phase === 'committing' || phase === 'analyzing';
        current = phase === 'done' ? null : phase === 'deriving' ? 'risks' : commit ? 'commit' : 'findings';
        last = now;
      };
      const source = { name: path, open: () => createReadStream(path) };
      const outcome = await loadFeedFiles(storage, [source], { onPhase }).catch(String);
      const seconds = (performance.now() - started) / 1000;
      const used = process.cpuUsage(cpu);
      const cpuSeconds = (used.user + used.system) / 1e6;
      if (typeof outcome === 'string' || outcome.load === null) {
        // Reported in its row; the next loads still run (each is a transaction of its own).
        const why = typeof outcome === 'string' ? outcome : JSON.stringify(outcome.problems[0]);
        process.stdout.write(`| ${label} | failed after ${seconds.toFixed(1)} s: ${why} |\n`);
        process.exitCode = 1;
        continue;
      }
      const f = outcome.load.feeds[0];
      const counts = [rows[name], f?.entries, f?.changed, outcome.load.findingsUpdated];
      const split = [steps.findings, steps.risks, steps.commit].map((s) => s.toFixed(1));
      const cells = [
        label,
        seconds.toFixed(1),
        ...split,
        cpuSeconds.toFixed(1),
        ...counts.map((n) => n?.toLocaleString('en-US')),
      ];
      const rss = `${Math.round(process.resourceUsage().maxRSS / 1024)} MB`; // kilobytes; the peak so far
      process.stdout.write(`| ${[...cells, rss].join(' | ')} |\n`);
    }
    await smallIngests(storage);
  } finally {
    await storage.close();
  }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'secinv-bench-feeds-'));
  try {
    const db = await tenantDatabase(dir, { db: args.db, options, name: 'feeds' });
    try {
      writeFileSync(join(dir, 'run.json'), JSON.stringify({ url: db.url, rows: await writeFeeds(dir, options) }));
      const argv = [...process.execArgv, fileURLToPath(import.meta.url), '--measure', dir];
      const child = spawnSync(process.execPath, argv, { stdio: 'inherit' });
      process.exitCode = child.status ?? 1; // a load failed: its row says why
    } finally {
      await db.drop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (args.measure !== undefined) await measure(args.measure);
else await main();
