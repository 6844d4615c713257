// The change log's cost to the writes (docs/BENCHMARKS.md "Change log cost"): the same writes timed on this tree and
// on a worktree of the code before the log (`git worktree add ../wt-before 5bc8723^`, its node_modules linked or
// installed), alternated run by run (before, after, after, before, …) so that a machine's drift falls on both:
// - import: the generated tenant into an empty database through `secinv import`'s code path (bench/import.ts), then
//   the same tenant generated one day later (`now` + 1 day: every timestamp moves) imported over it;
// - ingest: bench/ingest-measure.js of each tree (its built modules) on one set of Trivy reports: 200,000 findings
//   into an empty database, the same findings as a second image, the first image again with its last 50,000 findings
//   gone (resolved), then whole again (reopened);
// - feeds: each tree's own `bench/feeds.ts` (its five loads and two small ingests), on its own kept tenant.
// After each import on this tree: the log's rows and its bytes on disk (table and indexes) per change.
// Usage: node --import tsx bench/change-log-cost.ts --before DIR [--db sqlite|postgres --assets 20000 --runs 2
//   --findings 200000 --only import,ingest,feeds]
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import pg from 'pg';
import { writeTrivyReport } from './trivy-report.js';

const { values: args } = parseArgs({
  options: {
    before: { type: 'string' },
    after: { type: 'string', default: '.' },
    db: { type: 'string', default: process.env.SECINV_BENCH_DB ?? 'sqlite' },
    assets: { type: 'string', default: '20000' },
    findings: { type: 'string', default: '200000' },
    runs: { type: 'string', default: '2' },
    only: { type: 'string', default: 'import,ingest,feeds' },
    child: { type: 'string' }, // internal: `import` (of --step 0 or 1), run inside the tree --root on the database --url
    step: { type: 'string' },
    root: { type: 'string' },
    url: { type: 'string' },
  },
});
const admin = process.env.SECINV_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const DAY = 86_400_000;

/** The child: one of the imports with the tree's own modules; prints one `RESULT` line of JSON. */
async function importChild(root: string, url: string, step: number): Promise<void> {
  const from = (path: string) => import(pathToFileURL(join(root, path)).href);
  const { importGenerated } = (await from('bench/import.ts')) as typeof import('./import.js');
  const { openStorage } = (await from('src/storage/index.ts')) as typeof import('../src/storage/index.js');
  const assets = Number(args.assets);
  const options = { seed: 'bench', tenants: 1, assets, findingsPerAsset: 10, risks: assets / 2 };
  for (const [label, now] of [
    ['into an empty database', new Date('2026-11-01T00:00:00.000Z')],
    ['the tenant one day later, over it', new Date(Date.parse('2026-11-01T00:00:00.000Z') + DAY)],
  ].slice(step, step + 1) as [string, Date][]) {
    const storage = await openStorage(url);
    try {
      // CPU of every thread of this process over the generation and the import (the generation is the same work on
      // both trees): steadier than the wall time on a shared machine.
      const cpu = process.cpuUsage();
      const result = await importGenerated(storage, { ...options, now });
      const used = process.cpuUsage(cpu);
      if (result.problemCount > 0) throw new Error(JSON.stringify(result.problems.slice(0, 3)));
      const records = Object.values(result.counts).reduce((a, b) => a + b, 0);
      process.stdout.write(
        `RESULT ${JSON.stringify({ label, seconds: result.seconds, records, cpu: (used.user + used.system) / 1e6 })}\n`,
      );
    } finally {
      await storage.close();
    }
  }
}

interface Database_ {
  url: string;
  drop: () => Promise<void>;
}

async function adminQuery(text: string, url = admin): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return client.query(text).finally(() => client.end());
}

let databases = 0;
/** An empty database of the chosen dialect. */
async function emptyDatabase(dir: string): Promise<Database_> {
  databases += 1;
  if (args.db === 'sqlite') return { url: `sqlite:${join(dir, `cost-${databases}.db`)}`, drop: async () => undefined };
  const name = `secinv_bench_cost_${process.pid}_${databases}`;
  await adminQuery(`create database ${name}`);
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => adminQuery(`drop database if exists ${name} with (force)`).then() };
}

/** The change log's rows and bytes on disk (table and its indexes). */
async function logSize(url: string): Promise<{ rows: number; bytes: number }> {
  if (url.startsWith('sqlite:')) {
    const db = new Database(url.slice('sqlite:'.length), { readonly: true });
    try {
      const { rows } = db.prepare('select count(*) as rows from changes').get() as { rows: number };
      const { bytes } = db
        .prepare(
          `select sum(pgsize) as bytes from dbstat
            where name in (select name from sqlite_schema where tbl_name = 'changes')`,
        )
        .get() as { bytes: number };
      return { rows, bytes };
    } finally {
      db.close();
    }
  }
  const { rows } = await adminQuery(
    `select (select count(*) from changes)::float8 as rows, pg_total_relation_size('changes')::float8 as bytes`,
    url,
  );
  return rows[0] as { rows: number; bytes: number };
}

type Sample = { tree: 'before' | 'after'; step: string; seconds: number; cpu?: number };
const samples: Sample[] = [];
const notes: string[] = [];

function run(command: string, argv: string[], cwd: string): string {
  const child = spawnSync(command, argv, { cwd, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (child.status !== 0)
    throw new Error(`${argv.join(' ')} in ${cwd}: ${child.status}\n${child.stdout}${child.stderr}`);
  return child.stdout;
}

async function importRun(tree: Sample['tree'], root: string, dir: string): Promise<void> {
  const db = await emptyDatabase(dir);
  try {
    const script = fileURLToPath(import.meta.url);
    for (const step of ['0', '1']) {
      const argv = ['--import', 'tsx', script, '--child', 'import', '--step', step, '--root', root, '--url', db.url];
      const line = run(process.execPath, [...argv, '--assets', args.assets], root)
        .split('\n')
        .find((l) => l.startsWith('RESULT '));
      const { label, seconds, records, cpu } = JSON.parse(line!.slice(7)) as {
        label: string;
        seconds: number;
        records: number;
        cpu: number;
      };
      samples.push({ tree, step: `import ${records.toLocaleString('en-US')} records ${label}`, seconds, cpu });
      process.stdout.write(`${tree} import ${label}: ${seconds.toFixed(1)} s (CPU ${cpu.toFixed(1)} s)\n`);
      if (tree === 'after') {
        const { rows, bytes } = await logSize(db.url);
        notes.push(
          `${args.db}, after the import ${label}: ${rows.toLocaleString('en-US')} changes, ${(bytes / 1e6).toFixed(1)} MB ` +
            `(table and indexes) = **${(bytes / rows).toFixed(0)} bytes per change**`,
        );
        process.stdout.write(`${notes.at(-1)}\n`);
      }
    }
  } finally {
    await db.drop();
    if (db.url.startsWith('sqlite:'))
      for (const s of ['', '-wal', '-shm']) rmSync(`${db.url.slice(7)}${s}`, { force: true });
  }
}

/** The ingest's reports, shared by both trees: [file, label, findings]. */
async function ingestReports(dir: string): Promise<[string, string, number][]> {
  const findings = Number(args.findings);
  const fewer = findings - Math.floor(findings / 4);
  const file = (name: string) => join(dir, name);
  await writeTrivyReport(file('a.json'), { app: 'app', digit: 'a', findings, shape: 'lean' });
  await writeTrivyReport(file('c.json'), { app: 'other', digit: 'c', findings, shape: 'lean' });
  await writeTrivyReport(file('a-fewer.json'), { app: 'app', digit: 'a', findings: fewer, shape: 'lean' });
  const n = (x: number) => x.toLocaleString('en-US');
  return [
    [file('a.json'), `ingest ${n(findings)} into an empty database`, findings],
    [file('c.json'), `ingest ${n(findings)} as a second image`, findings],
    [file('a-fewer.json'), `ingest the first image again, ${n(findings - fewer)} findings gone (resolved)`, fewer],
    [file('a.json'), `ingest the first image whole again (${n(findings - fewer)} reopened)`, findings],
  ];
}

async function ingestRun(tree: Sample['tree'], root: string, dir: string, reports: [string, string, number][]) {
  const db = await emptyDatabase(dir);
  try {
    for (const [file, label, findings] of reports) {
      const out = run(process.execPath, [join(root, 'bench/ingest-measure.js'), db.url, file, String(findings)], root);
      const m = / in ([\d.]+) s = .*\(CPU ([\d.]+) s\)/.exec(out);
      if (m === null) throw new Error(`unreadable: ${out}`);
      samples.push({ tree, step: label, seconds: Number(m[1]), cpu: Number(m[2]) });
      process.stdout.write(`${tree} ${label}: ${m[1]} s (CPU ${m[2]} s)\n`);
      if (tree === 'after') {
        const { rows, bytes } = await logSize(db.url);
        notes.push(
          `${args.db}, after the ${label}: ${rows.toLocaleString('en-US')} changes, ${(bytes / rows).toFixed(0)} bytes each`,
        );
      }
    }
  } finally {
    await db.drop();
    if (db.url.startsWith('sqlite:'))
      for (const s of ['', '-wal', '-shm']) rmSync(`${db.url.slice(7)}${s}`, { force: true });
  }
}

function feedsRun(tree: Sample['tree'], root: string): void {
  const out = run(
    process.execPath,
    ['--import', 'tsx', 'bench/feeds.ts', '--db', args.db, '--assets', args.assets, '--findings-per-asset', '10'],
    root,
  );
  for (const line of out.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    const [, label, seconds, , , , cpu] = cells;
    if (cells.length >= 12 && label !== 'load' && !Number.isNaN(Number(seconds)))
      samples.push({ tree, step: `feeds: ${label}`, seconds: Number(seconds), cpu: Number(cpu) });
    else if (cells.length === 4 && label !== undefined && /image|again/.test(label) && !Number.isNaN(Number(seconds)))
      samples.push({ tree, step: `feeds: an 8-finding ingest, ${label}`, seconds: Number(seconds) });
  }
  process.stdout.write(
    `${tree} feeds: ${samples.filter((s) => s.tree === tree && s.step.startsWith('feeds')).length} figures\n`,
  );
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

function table(): string[] {
  const steps = [...new Set(samples.map((s) => s.step))];
  const lines = [
    '| write | before (s, each run) | after (s, each run) | median before → after | after / before | CPU s, median before → after |',
    '|---|---|---|---|---|---|',
  ];
  for (const step of steps) {
    const of = (tree: Sample['tree']) => samples.filter((s) => s.step === step && s.tree === tree);
    const [b, a] = [of('before'), of('after')];
    const secs = (xs: Sample[]) => xs.map((s) => s.seconds.toFixed(step.includes('8-finding') ? 2 : 1)).join(', ');
    const [mb, ma] = [median(b.map((s) => s.seconds)), median(a.map((s) => s.seconds))];
    const cpu =
      b[0]?.cpu === undefined || a[0]?.cpu === undefined
        ? ''
        : `${median(b.map((s) => s.cpu!)).toFixed(1)} → ${median(a.map((s) => s.cpu!)).toFixed(1)}`;
    const digits = step.includes('8-finding') ? 2 : 1;
    lines.push(
      `| ${step} | ${secs(b)} | ${secs(a)} | ${mb.toFixed(digits)} → ${ma.toFixed(digits)} | ${(ma / mb).toFixed(2)} | ${cpu} |`,
    );
  }
  return lines;
}

async function main(): Promise<void> {
  if (args.before === undefined) throw new Error('--before DIR: a worktree of the code before the change log');
  const trees = { before: resolve(args.before), after: resolve(args.after) };
  const only = new Set(args.only.split(','));
  const dir = mkdtempSync(join(tmpdir(), 'secinv-bench-cost-'));
  try {
    let reports: [string, string, number][] = [];
    if (only.has('ingest')) {
      // ingest-measure.js runs on each tree's built modules.
      for (const root of Object.values(trees)) execFileSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: root });
      reports = await ingestReports(dir);
    }
    const runs = Number(args.runs);
    for (let r = 0; r < runs; r += 1) {
      const order = r % 2 === 0 ? (['before', 'after'] as const) : (['after', 'before'] as const);
      for (const tree of order) {
        if (only.has('import')) await importRun(tree, trees[tree], dir);
        if (only.has('ingest')) await ingestRun(tree, trees[tree], dir, reports);
        if (only.has('feeds')) feedsRun(tree, trees[tree]);
      }
    }
    const head = (root: string) =>
      execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root }).toString().trim();
    process.stdout.write(
      `\n### ${args.db}, ${new Date().toISOString().slice(0, 10)}: before ${head(trees.before)}, after ${head(trees.after)}, ` +
        `${runs} runs each, --assets ${args.assets}, --findings ${args.findings}\n\n${[...table(), '', ...[...new Set(notes)].map((n) => `- ${n}`)].join('\n')}\n`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (args.child === 'import') await importChild(resolve(args.root!), args.url!, Number(args.step));
else await main();
