// Reads one threat-intel feed file (plain or gzip, kind told by content): the CISA KEV catalog (JSON), FIRST EPSS
// scores (CSV with its `#model_version` comment line) or Exploit-DB's `files_exploits.csv`. Every problem names the
// line or JSON path; nothing is written here (src/feeds/load.ts hands the parsed feeds to storage in one transaction).
import { pipeline, Readable } from 'node:stream';
import { Parser } from 'csv-parse';
import type { CveExploit, EpssScore, FeedData, FeedName, KevEntry } from '../domain/intel.js';
import { detectFormat } from '../input/detect.js';
import { isObject, text, texts } from '../input/json.js';
import { openReport } from '../input/source.js';
import { formatPath, JsonStreamError, streamJson } from '../input/stream.js';

export interface FeedSource {
  name: string;
  open(): Readable;
}

export type FeedRead = { data: FeedData } | { problems: string[] };

// Bounded: a CVE id is a key of the feed tables (src/domain/limits.ts); real ones have at most 7 digits.
const CVE = /^CVE-\d{4}-\d{4,19}$/i;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const FEED_WORDS: Record<FeedName, string> = { kev: 'CISA KEV', exploitdb: 'Exploit-DB', epss: 'FIRST EPSS' };
const EPSS_HEADER = 'cve,epss,percentile';

/** The feed a file holds, told by its first bytes, or what it is instead. */
export function detectFeed(head: Buffer, complete: boolean): { feed: FeedName } | { problem: string } {
  if (head.length === 0) return { problem: 'is empty' };
  if (head.subarray(0, 4096).includes(0)) return { problem: 'is a binary file, not a feed' };
  const textHead = head.toString('utf8');
  const start = textHead.trimStart();
  if (start.startsWith('{') || start.startsWith('[')) {
    if (/"catalogVersion"|"cveID"/.test(textHead)) return { feed: 'kev' };
    const scanner = detectFormat(head, complete);
    if ('format' in scanner)
      return { problem: `is a ${scanner.format} report, not a feed: load it with \`secinv ingest\`` };
    return { problem: 'is JSON but not a CISA KEV catalog (no `catalogVersion` or `vulnerabilities[].cveID`)' };
  }
  const lines = textHead.split(/\r?\n/);
  const first = lines[0]?.trim() ?? '';
  const firstData =
    lines
      .find((l) => l.trim() !== '' && !l.startsWith('#'))
      ?.trim()
      .toLowerCase() ?? '';
  if (first.startsWith('#model_version') || firstData.startsWith(EPSS_HEADER)) return { feed: 'epss' };
  if (/^id,file,description,/.test(firstData) && firstData.includes('codes')) return { feed: 'exploitdb' };
  if (/^cve-\d{4}-\d+,[\d.e-]+,[\d.e-]+$/.test(firstData))
    return { problem: `looks like EPSS scores without their header line \`${EPSS_HEADER}\`` };
  return {
    problem: 'is not a feed secinv reads (a CISA KEV catalog JSON, a FIRST EPSS CSV or Exploit-DB files_exploits.csv)',
  };
}

/** A KEV string field: a string or null; anything else is a problem. */
function kevEntry(value: unknown, path: string, problems: string[]): KevEntry | null {
  if (!isObject(value)) {
    problems.push(`${path}: must be an object`);
    return null;
  }
  const cveID = text(value.cveID)?.trim().toUpperCase() ?? null;
  if (cveID === null || !CVE.test(cveID)) {
    problems.push(`${path}.cveID: must be a CVE id (CVE-yyyy-nnnn), not ${JSON.stringify(value.cveID ?? null)}`);
    return null;
  }
  const date = (field: 'dateAdded' | 'dueDate'): string | null => {
    const v = value[field];
    if (v === undefined || v === null || v === '') return null;
    if (typeof v === 'string' && DATE.test(v)) return v;
    problems.push(`${path}.${field}: must be a date (yyyy-MM-dd), not ${JSON.stringify(v)}`);
    return null;
  };
  const str = (field: string): string | null => {
    const v = value[field];
    if (v === undefined || v === null) return null;
    if (typeof v === 'string') return v;
    problems.push(`${path}.${field}: must be a string`);
    return null;
  };
  return {
    cveID,
    notes: str('notes'),
    product: str('product'),
    vendorProject: str('vendorProject'),
    requiredAction: str('requiredAction'),
    shortDescription: str('shortDescription'),
    vulnerabilityName: str('vulnerabilityName'),
    dueDate: date('dueDate'),
    dateAdded: date('dateAdded'),
    knownRansomwareCampaignUse: str('knownRansomwareCampaignUse'),
    cwes: texts(value.cwes),
  };
}

async function readKev(bytes: AsyncIterable<Buffer>, source: string): Promise<FeedRead> {
  const problems: string[] = [];
  const entries = new Map<string, KevEntry>();
  let root: unknown = null;
  for await (const { path, value } of streamJson(bytes, [['vulnerabilities', '*']])) {
    if (path.length === 0) {
      root = value;
      continue;
    }
    // `*` matches an object's keys too: entries outside an array are the shape problem reported below.
    if (typeof path[1] !== 'number') continue;
    const entry = kevEntry(value, formatPath(path), problems);
    // The catalog lists a CVE once; should it not, the first entry stands.
    if (entry && !entries.has(entry.cveID ?? '')) entries.set(entry.cveID ?? '', entry);
    if (problems.length >= 20) break;
  }
  if (problems.length === 0) {
    if (!isObject(root)) problems.push('$: must be an object (a CISA KEV catalog)');
    else if (!Array.isArray(root.vulnerabilities)) problems.push('$.vulnerabilities: must be an array of entries');
  }
  if (problems.length > 0) return { problems };
  const catalog = root as Record<string, unknown>;
  return {
    data: {
      feed: 'kev',
      version: text(catalog.catalogVersion) ?? text(catalog.dateReleased),
      source,
      entries: [...entries.values()],
    },
  };
}

/**
 * A CSV parser whose records come with the line each ends on. csv-parse's `info` option gives that line too, but
 * builds a copy of its whole counter object for every record, which took 1.1 of the 2 s an EPSS file's 300,000 rows
 * took to parse. A record is pushed while the parser sits at its end, so the line read from `info` at that moment is
 * the one `info` would have given.
 */
class LinedParser extends Parser {
  override push(record: unknown): boolean {
    return super.push(record === null ? null : { row: record, line: this.info.lines });
  }
}

/** Rows of a CSV with their line numbers; a malformed CSV (an unclosed quote…) is a problem naming its line. */
async function* csvRows(bytes: AsyncIterable<Buffer>): AsyncGenerator<{ row: string[]; line: number }> {
  const parser = new LinedParser({ comment: '#', skip_empty_lines: true, relax_column_count: true });
  // A read error reaches the parser; a reader that stops early destroys the parser and with it the input.
  pipeline(Readable.from(bytes), parser, () => undefined);
  yield* parser as AsyncIterable<{ row: string[]; line: number }>;
}

const csvProblem = (error: unknown): string => {
  const e = error as { code?: string; lines?: number; message?: string };
  if (typeof e.code === 'string' && e.code.startsWith('CSV_'))
    return `line ${e.lines ?? '?'}: not valid CSV: ${e.message ?? e.code}`;
  throw error;
};

async function readEpss(bytes: AsyncIterable<Buffer>, head: Buffer, source: string): Promise<FeedRead> {
  const problems: string[] = [];
  const entries: EpssScore[] = [];
  // `#model_version:v2026.06.15,score_date:2026-09-29T12:00:22Z`: optional; without it the date is the file name's.
  const comment = /^#(.*)/.exec(head.toString('utf8').split(/\r?\n/)[0] ?? '')?.[1] ?? '';
  const model = /model_version:\s*([^,\s]+)/.exec(comment)?.[1] ?? null;
  const scoreDate =
    /score_date:(\d{4}-\d{2}-\d{2})/.exec(comment)?.[1] ?? /(\d{4}-\d{2}-\d{2})/.exec(source)?.[1] ?? null;
  let header = true;
  try {
    for await (const { row, line } of csvRows(bytes)) {
      if (header) {
        header = false;
        if (row.map((c) => c.trim().toLowerCase()).join(',') !== EPSS_HEADER) {
          problems.push(`line ${line}: the header must be \`${EPSS_HEADER}\`, not \`${row.join(',')}\``);
          break;
        }
        continue;
      }
      const [cve = '', epss = '', percentile = ''] = row.map((c) => c.trim());
      const score = Number(epss);
      const rank = Number(percentile);
      if (!CVE.test(cve)) problems.push(`line ${line}: \`${cve}\` is not a CVE id`);
      else if (epss === '' || !(score >= 0 && score <= 1)) problems.push(`line ${line}: epss must be from 0 to 1`);
      else if (percentile === '' || !(rank >= 0 && rank <= 1))
        problems.push(`line ${line}: percentile must be from 0 to 1`);
      else entries.push({ cveId: cve.toUpperCase(), epss: score, percentile: rank });
      if (problems.length >= 20) break;
    }
  } catch (error) {
    problems.push(csvProblem(error));
  }
  if (header && problems.length === 0) problems.push(`has no header line \`${EPSS_HEADER}\``);
  if (problems.length > 0) return { problems };
  const version = scoreDate === null ? model : model === null ? scoreDate : `${scoreDate} (model ${model})`;
  return { data: { feed: 'epss', version, source, entries } };
}

const EXPLOITDB_COLUMNS = ['id', 'description', 'date_published', 'type', 'platform', 'verified', 'codes'];

async function readExploitDb(bytes: AsyncIterable<Buffer>, source: string): Promise<FeedRead> {
  const problems: string[] = [];
  const entries: CveExploit[] = [];
  const seen = new Set<string>();
  let columns: Map<string, number> | null = null;
  let latest = '';
  try {
    for await (const { row, line } of csvRows(bytes)) {
      if (columns === null) {
        columns = new Map(row.map((name, i) => [name.trim().toLowerCase(), i]));
        const missing = EXPLOITDB_COLUMNS.filter((c) => !columns?.has(c));
        if (missing.length > 0) {
          problems.push(`line ${line}: the header has no column ${missing.map((c) => `\`${c}\``).join(', ')}`);
          break;
        }
        continue;
      }
      const at = columns;
      const cell = (name: string): string => row[at.get(name) ?? -1]?.trim() ?? '';
      const id = cell('id');
      if (!/^\d{1,19}$/.test(id)) {
        problems.push(`line ${line}: id must be an Exploit-DB number, not \`${id}\``);
        if (problems.length >= 20) break;
        continue;
      }
      // One exploit can fill several rows (one per tag): the first stands.
      if (seen.has(id)) continue;
      seen.add(id);
      for (const date of [cell('date_added'), cell('date_updated'), cell('date_published')])
        if (DATE.test(date) && date > latest) latest = date;
      const kind = [cell('type'), cell('platform')].filter((s) => s !== '').join('/');
      const published = cell('date_published');
      const exploit = {
        id,
        title: cell('description') || null,
        description: [
          kind,
          published === '' ? '' : `published ${published}`,
          cell('verified') === '1' ? 'verified' : 'not verified',
        ]
          .filter((s) => s !== '')
          .join(', '),
        source: 'Exploit-DB',
        sourceUrl: `https://www.exploit-db.com/exploits/${id}`,
      };
      const cves = new Set(
        cell('codes')
          .split(';')
          .map((c) => c.trim().toUpperCase())
          .filter((c) => CVE.test(c)),
      );
      for (const cveId of cves) entries.push({ cveId, exploit });
    }
  } catch (error) {
    problems.push(csvProblem(error));
  }
  if (columns === null && problems.length === 0) problems.push('has no header line');
  if (problems.length > 0) return { problems };
  return { data: { feed: 'exploitdb', version: latest === '' ? null : latest, source, entries } };
}

/** Reads one feed file; problems name the line or JSON path. */
export async function readFeed(source: FeedSource): Promise<FeedRead> {
  const report = await openReport(() => source.open());
  const detected = detectFeed(report.head, report.complete);
  if ('problem' in detected) return { problems: [detected.problem] };
  try {
    switch (detected.feed) {
      case 'kev':
        return await readKev(report.bytes, source.name);
      case 'epss':
        return await readEpss(report.bytes, report.head, source.name);
      case 'exploitdb':
        return await readExploitDb(report.bytes, source.name);
    }
  } catch (error) {
    if (error instanceof JsonStreamError) return { problems: [`${FEED_WORDS.kev} catalog: ${error.message}`] };
    throw error;
  }
}

export const feedWord = (feed: FeedName): string => FEED_WORDS[feed];
