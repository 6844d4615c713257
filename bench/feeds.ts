// Feeds benchmark: `secinv feeds load` at full feed sizes (KEV ~1,500 entries, EPSS ~300,000 scores, Exploit-DB ~50,000
// rows) over a tenant of ~1,000,000 generated findings, through loadFeedFiles as the CLI calls it. Prints, per load, the
// seconds, rows, rows changed, findings re-enriched and the peak RSS. Feed files go to a temporary folder.
// Usage: npm run bench:feeds [-- --db sqlite|postgres --assets N --findings-per-asset N] (or SECINV_BENCH_DB=postgres)
import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { copyFileSync, createReadStream, createWriteStream, existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { closeSync, fsyncSync, openSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { loadFeedFiles } from '../src/feeds/load.js';
import { buildPools } from '../src/generate/findings.js';
import { generateRecords, type GenerateOptions } from '../src/generate/generator.js';
import { chance, createRng, int, isoDate, pick, shuffle } from '../src/generate/random.js';
import { settingsOf } from '../src/generate/settings.js';
import { importSources, summaryLine } from '../src/import/importer.js';
import { openStorage } from '../src/storage/index.js';

const { values: args } = parseArgs({
  options: {
    db: { type: 'string', default: process.env.SECINV_BENCH_DB ?? 'sqlite' },
    assets: { type: 'string', default: '100000' },
    'findings-per-asset': { type: 'string', default: '10' },
    measure: { type: 'string' }, // internal: the child process that times the loads, given the folder of the files
  },
});
const [assets, findingsPerAsset] = [Number(args.assets), Number(args['findings-per-asset'])];
const options: GenerateOptions = { seed: 'bench', tenants: 1, assets, findingsPerAsset, risks: 0 };
const [KEV_ENTRIES, EPSS_ROWS, EXPLOITDB_ROWS] = [1_500, 300_000, 50_000];
// Shares of the CVEs the findings carry that KEV and Exploit-DB list. The generator draws ~1,000,000 findings from
// ~2,000 advisories, so each listed CVE re-enriches ~500 findings: 5% known exploited and 15% with a public exploit are
// the usual orders of magnitude for a fleet's scanner findings, and enough for re-enrichment to weigh on the loads.
const [KEV_SHARE, EXPLOIT_SHARE] = [0.05, 0.15];
const [KEV, EPSS, EDB, KEV2] = ['kev.json', 'epss_scores-2026-11-24.csv', 'files_exploits.csv', 'kev2.json'];
const STEPS = [
  ['KEV', KEV],
  ['EPSS', EPSS],
  ['Exploit-DB', EDB],
  ['KEV again (same file)', KEV],
  ['KEV newer (50 entries changed or removed)', KEV2],
] as const;

/** Imports the generated tenant as `secinv generate | secinv import` would. */
async function build(url: string): Promise<void> {
  const storage = await openStorage(url);
  const started = performance.now();
  const lines = function* () {
    for (const line of generateRecords(options)) yield `${line}\n`;
  };
  const open = () => Readable.from(lines());
  const result = await importSources(storage, [{ name: '<generated>', open }], { dryRun: false });
  await storage.close();
  if (result.problemCount > 0) throw new Error(`import failed: ${JSON.stringify(result.problems.slice(0, 3))}`);
  process.stdout.write(`${summaryLine(result, false)} in ${((performance.now() - started) / 1000).toFixed(0)} s\n`);
}

const adminQuery = async (admin: string, text: string): Promise<void> => {
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  await client.query(text).finally(() => client.end());
};

/** A database holding the generated tenant; `drop` removes it. */
async function database(dir: string): Promise<{ url: string; drop: () => Promise<void> }> {
  if (args.db === 'sqlite') {
    // The imported tenant is kept in data/ (git-ignored, as for `npm run bench`) and copied per run: the loads change
    // it, and the import takes minutes.
    const base = `data/bench-feeds-${options.assets}-${options.findingsPerAsset}.db`;
    if (!existsSync(base)) {
      mkdirSync('data', { recursive: true });
      for (const suffix of ['', '-wal', '-shm']) rmSync(`${base}.partial${suffix}`, { force: true });
      await build(`sqlite:${base}.partial`);
      renameSync(`${base}.partial`, base);
    } else process.stdout.write(`reusing ${base} (delete it to import again)\n`);
    const copy = join(dir, 'bench.db');
    copyFileSync(base, copy);
    // Flushed now, so that writing back the 6 GB copy does not compete with the loads' commits for the disk.
    const fd = openSync(copy, 'r+');
    fsyncSync(fd);
    closeSync(fd);
    return { url: `sqlite:${copy}`, drop: async () => undefined };
  }
  const admin = process.env.SECINV_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const name = `secinv_bench_feeds_${process.pid}`;
  const url = new URL(admin);
  url.pathname = `/${name}`;
  const drop = () => adminQuery(admin, `drop database if exists ${name} with (force)`);
  await adminQuery(admin, `create database ${name}`);
  await build(url.toString()).catch(async (error: unknown) => {
    await drop();
    throw error;
  });
  return { url: url.toString(), drop };
}

const rng = createRng('bench-feeds');
const day = (from: string, to: string) => isoDate(int(rng, Date.parse(from), Date.parse(to)));
const quoted = (s: string) => `"${s.replace(/"/g, '""')}"`;

async function writeLines(path: string, lines: Iterable<string>): Promise<void> {
  const out = createWriteStream(path);
  for (const line of lines) if (!out.write(`${line}\n`)) await once(out, 'drain');
  out.end();
  await once(out, 'finish');
}

function kevEntry(cveID: string) {
  const vendorProject = pick(rng, ['Microsoft', 'Apache', 'Cisco', 'Fortinet', 'Ivanti', 'Oracle', 'VMware', 'Linux']);
  const product = `${pick(rng, ['Gateway', 'Server', 'Kernel', 'Connect Secure', 'Exchange'])} ${int(rng, 1, 30)}`;
  const dateAdded = day('2021-11-03', '2026-11-20');
  return {
    cveID,
    vendorProject,
    product,
    vulnerabilityName: `${vendorProject} ${product} Improper Input Validation Vulnerability`,
    dateAdded,
    shortDescription: `${vendorProject} ${product} contains an improper input validation vulnerability that allows a remote, unauthenticated attacker to execute arbitrary code via a crafted request.`,
    requiredAction:
      'Apply mitigations per vendor instructions, follow applicable BOD 22-01 guidance for cloud services, or discontinue use of the product if mitigations are unavailable.',
    dueDate: isoDate(Date.parse(dateAdded) + 21 * 86_400_000),
    knownRansomwareCampaignUse: chance(rng, 0.2) ? 'Known' : 'Unknown',
    notes: `https://nvd.nist.gov/vuln/detail/${cveID}`,
    cwes: [pick(rng, ['CWE-20', 'CWE-78', 'CWE-787', 'CWE-502', 'CWE-22'])],
  };
}
type Kev = ReturnType<typeof kevEntry>;

function writeKev(path: string, catalogVersion: string, vulnerabilities: Kev[]): void {
  const [title, count] = ['CISA Catalog of Known Exploited Vulnerabilities', vulnerabilities.length];
  const dateReleased = `${catalogVersion.replace(/\./g, '-')}T15:00:57.5282Z`;
  writeFileSync(path, JSON.stringify({ title, catalogVersion, dateReleased, count, vulnerabilities }, null, 4));
}

/** Writes the four files; returns the rows of each. */
async function writeFeeds(dir: string): Promise<Record<string, number>> {
  // Every CVE id a generated finding can carry: the generator draws findings from these per-ecosystem pools.
  const pools = Object.values(buildPools(settingsOf(options)));
  const poolCves = [...new Set(pools.flatMap((pool) => pool.map((a) => a.vulnerabilityId)))];
  const taken = new Set(poolCves);
  // CVE ids no finding carries: most of every real feed is about software the fleet does not run.
  const otherCves = (count: number): string[] => {
    const out: string[] = [];
    while (out.length < count) {
      const id = `CVE-${int(rng, 1999, 2026)}-${int(rng, 1000, 99999)}`;
      if (!taken.has(id)) out.push(id);
      taken.add(id);
    }
    return out;
  };
  const shuffled = shuffle(rng, poolCves);
  const kevHits = new Set(shuffled.slice(0, Math.round(poolCves.length * KEV_SHARE)));
  const exploitHits = shuffled.slice(-Math.round(poolCves.length * EXPLOIT_SHARE));
  const file = (name: string) => join(dir, name);

  const kev = shuffle(rng, [...kevHits, ...otherCves(KEV_ENTRIES - kevHits.size)]).map(kevEntry);
  writeKev(file(KEV), '2026.11.24', kev);
  // The next day's catalog: 50 entries changed or (one in three) removed, 10 of them on CVEs the findings carry.
  const moved = [...kev.filter((e) => kevHits.has(e.cveID)).slice(0, 10), ...kev.filter((e) => !kevHits.has(e.cveID))];
  const [changed, removed] = [new Set(moved.slice(0, 50)), new Set(moved.slice(0, 50).filter((_, k) => k % 3 === 0))];
  const edit = (e: Kev) => ({ ...e, shortDescription: `${e.shortDescription} Updated.`, dueDate: '2026-12-15' });
  const newer = kev.filter((e) => !removed.has(e)).map((e) => (changed.has(e) ? edit(e) : e));
  writeKev(file(KEV2), '2026.11.25', newer);

  // EPSS scores every published CVE, sorted by id; skewed low: with epss = u^6 of a uniform u, u is its percentile.
  const key = (id: string) => id.replace(/-(\d+)$/, (_, n: string) => `-${n.padStart(7, '0')}`);
  const epss = [...poolCves, ...otherCves(EPSS_ROWS - poolCves.length)].map((id) => [key(id), id] as const);
  epss.sort((a, b) => (a[0] < b[0] ? -1 : 1));
  const score = (id: string, u: number) => `${id},${Math.max(0.00001, u ** 6).toFixed(5)},${u.toFixed(5)}`;
  await writeLines(file(EPSS), [
    '#model_version:v2025.03.14,score_date:2026-11-24T12:55:00Z',
    'cve,epss,percentile',
    ...epss.map(([, id]) => score(id, rng())),
  ]);

  // Exploit-DB: each exploit-hit CVE on one to three exploits at random rows; ~55% of the other rows name a CVE.
  const codesAt = new Map<number, string[]>();
  for (const cve of exploitHits)
    for (let k = int(rng, 1, 3); k > 0; k -= 1) {
      const row = int(rng, 1, EXPLOITDB_ROWS - 1);
      codesAt.set(row, [...(codesAt.get(row) ?? []), cve]);
    }
  const exploits = [
    'id,file,description,date_published,author,type,platform,port,date_added,date_updated,verified,codes,tags,aliases,screenshot_url,application_url,source_url',
  ];
  for (let row = 0, id = 1000, previous = ''; row < EXPLOITDB_ROWS; row += 1) {
    // The real file lists an exploit once per tag: ~4% of rows repeat the previous exploit with another tag.
    if (previous !== '' && !codesAt.has(row) && chance(rng, 0.04)) {
      exploits.push(`${previous},${quoted(pick(rng, ['Remote', 'Denial of Service (DoS)', 'Local']))},,,,`);
      continue;
    }
    id += int(rng, 1, 2);
    const [type, platform] = [pick(rng, ['remote', 'webapps', 'local', 'dos']), pick(rng, ['linux', 'windows', 'php'])];
    const published = day('1999-01-01', '2026-11-20');
    const cves = codesAt.get(row) ?? (chance(rng, 0.55) ? otherCves(chance(rng, 0.1) ? 2 : 1) : []);
    const codes = [...cves, ...(chance(rng, 0.4) ? [`OSVDB-${int(rng, 1000, 120000)}`] : [])].join(';');
    const title = `Product ${int(rng, 1, 9000)} ${int(rng, 1, 9)}.${int(rng, 0, 9)} - "Remote" Code Execution, Unauthenticated`;
    const [author, verified] = [quoted(`Author ${id % 700}`), chance(rng, 0.6) ? '1' : '0'];
    previous = `${id},exploits/${platform}/${type}/${id}.txt,${quoted(title)},${published},${author},${type},${platform},`;
    previous += `,${published},${published},${verified},${codes}`;
    exploits.push(`${previous},,,,,`);
  }
  await writeLines(file(EDB), exploits);
  const mb = (name: string) => `${(statSync(file(name)).size / 1e6).toFixed(1)} MB`;
  const hits = `${kevHits.size} in KEV, ${exploitHits.length} in Exploit-DB`;
  process.stdout.write(`files: KEV ${mb(KEV)}, EPSS ${mb(EPSS)}, Exploit-DB ${mb(EDB)}; `);
  process.stdout.write(`of the ${poolCves.length} CVEs the findings carry, ${hits}\n`);
  return { [KEV]: kev.length, [EPSS]: epss.length, [EDB]: exploits.length - 1, [KEV2]: newer.length };
}

/** Times the loads, in a process of its own so that its peak RSS (maxRSS) is the loads' and not the import's. */
async function measure(dir: string): Promise<void> {
  type Run = { url: string; rows: Record<string, number> };
  const { url, rows } = JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8')) as Run;
  const storage = await openStorage(url);
  try {
    const findings = (await storage.tenantSummaries()).reduce((sum, t) => sum + t.findings, 0);
    process.stdout.write(`feeds ${storage.dialect}: ${findings.toLocaleString('en-US')} findings\n\n`);
    const columns = ['load', 'seconds', 'rows in file', 'rows stored', 'rows changed', 'findings re-enriched'];
    process.stdout.write(`| ${columns.join(' | ')} | peak RSS |\n${'|---'.repeat(7)}|\n`);
    for (const [label, name] of STEPS) {
      const path = join(dir, name);
      const started = performance.now();
      const outcome = await loadFeedFiles(storage, [{ name: path, open: () => createReadStream(path) }]).catch(String);
      const seconds = (performance.now() - started) / 1000;
      if (typeof outcome === 'string' || outcome.load === null) {
        // Reported in its row; the next loads still run (each is a transaction of its own).
        const why = typeof outcome === 'string' ? outcome : JSON.stringify(outcome.problems[0]);
        process.stdout.write(`| ${label} | failed after ${seconds.toFixed(1)} s: ${why} |\n`);
        process.exitCode = 1;
        continue;
      }
      const f = outcome.load.feeds[0];
      const counts = [rows[name], f?.entries, f?.changed, outcome.load.findingsUpdated];
      const cells = [label, seconds.toFixed(1), ...counts.map((n) => n?.toLocaleString('en-US'))];
      const rss = `${Math.round(process.resourceUsage().maxRSS / 1024)} MB`; // kilobytes; the peak so far
      process.stdout.write(`| ${[...cells, rss].join(' | ')} |\n`);
    }
  } finally {
    await storage.close();
  }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'secinv-bench-feeds-'));
  try {
    const db = await database(dir);
    try {
      writeFileSync(join(dir, 'run.json'), JSON.stringify({ url: db.url, rows: await writeFeeds(dir) }));
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
