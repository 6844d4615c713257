// Feed files of full size in the real formats, for the CVEs a generated tenant's findings carry: a KEV catalog of 1,500
// entries and the next day's (50 entries changed or removed), an EPSS file of 300,000 scores and an Exploit-DB
// files_exploits.csv of 50,000 rows. Shared by the feeds and risks benchmarks; deterministic for given options.
import { once } from 'node:events';
import { createWriteStream, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildPools } from '../src/generate/findings.js';
import type { GenerateOptions } from '../src/generate/generator.js';
import { chance, createRng, int, isoDate, pick, shuffle } from '../src/generate/random.js';
import { settingsOf } from '../src/generate/settings.js';

const [KEV_ENTRIES, EPSS_ROWS, EXPLOITDB_ROWS] = [1_500, 300_000, 50_000];
// Shares of the CVEs the findings carry that KEV and Exploit-DB list. The generator draws ~1,000,000 findings from
// ~2,000 advisories, so each listed CVE re-enriches ~500 findings: 5% known exploited and 15% with a public exploit are
// the usual orders of magnitude for a fleet's scanner findings, and enough for re-enrichment to weigh on the loads.
const [KEV_SHARE, EXPLOIT_SHARE] = [0.05, 0.15];
/** File names: the KEV catalog, the EPSS scores, Exploit-DB, and the next day's KEV catalog. */
export const [KEV, EPSS, EDB, KEV2] = ['kev.json', 'epss_scores-2026-11-24.csv', 'files_exploits.csv', 'kev2.json'];

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

/** Writes the four files for the tenant that `options` generates; returns the rows of each. */
export async function writeFeeds(dir: string, options: GenerateOptions): Promise<Record<string, number>> {
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
