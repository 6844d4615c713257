// Threat intel on a finding: what the loaded feeds (CISA KEV, Exploit-DB) add to what the finding itself says. The
// feeds are shared by every tenant; a finding is joined to them by its id and its aliases, upper-cased (docs/FEEDS.md).
// A finding's own values (an import file's `hasKev`, `knownExploit`, `exploits`) are kept: a feed can only add.
import type { Vulnerability } from './vulnerabilities.js';

export type KnownExploit = NonNullable<Vulnerability['knownExploit']>;
export type ExploitRef = Vulnerability['exploits'][number];

/** A KEV catalog entry: the API's `knownExploit` fields, plus two the API has no slot for (kept for risk rules). */
export interface KevEntry extends KnownExploit {
  knownRansomwareCampaignUse: string | null;
  cwes: string[];
}

/** The intel fields of a finding. */
export interface Intel {
  hasKev: boolean;
  hasExploit: boolean;
  knownExploit: KnownExploit | null;
  exploits: ExploitRef[];
}

export const NO_INTEL: Intel = { hasKev: false, hasExploit: false, knownExploit: null, exploits: [] };

/** The keys a finding is joined to the feeds by: its id, then its aliases, upper-cased, each once. */
export function intelKeys(vulnerabilityId: string, aliases: readonly string[] = []): string[] {
  return [...new Set([vulnerabilityId, ...aliases].map((id) => id.trim().toUpperCase()).filter((id) => id !== ''))];
}

/** A finding's own intel fields, or null when it says nothing a feed could not (the common case: a scanner's). */
export function ownIntel(v: Intel): Intel | null {
  if (!v.hasKev && !v.hasExploit && v.knownExploit === null && v.exploits.length === 0) return null;
  return { hasKev: v.hasKev, hasExploit: v.hasExploit, knownExploit: v.knownExploit, exploits: v.exploits };
}

/** The intel of a finding as stored beside its document: JSON of the four fields, or null when all are empty. */
export const storedIntel = (v: Intel): string | null => {
  const own = ownIntel(v);
  return own === null ? null : JSON.stringify(own);
};

/** A finding without its intel fields: the document stored apart from them (docs/DESIGN.md §44). */
export function withoutIntel<T extends Intel>(v: T): Omit<T, keyof Intel> {
  const { hasKev: _k, hasExploit: _e, knownExploit: _x, exploits: _l, ...rest } = v;
  return rest;
}

/** The stored intel of a finding with nothing in it, as served. */
export const NO_INTEL_JSON = JSON.stringify(NO_INTEL);

const KNOWN_EXPLOIT_FIELDS = [
  'cveID',
  'notes',
  'product',
  'vendorProject',
  'requiredAction',
  'shortDescription',
  'vulnerabilityName',
  'dueDate',
  'dateAdded',
] as const satisfies readonly (keyof KnownExploit)[];

/** The API's `knownExploit` of a catalog entry: its nine fields, in the API's order. */
export const knownExploitOf = (entry: KevEntry): KnownExploit =>
  Object.fromEntries(KNOWN_EXPLOIT_FIELDS.map((k) => [k, entry[k]])) as KnownExploit;

/**
 * The intel of a finding: its own values, plus the first catalog entry among its keys (in key order: its own id before
 * its aliases) and every exploit of any key, each exploit once. `hasKev` is the finding's own value OR the catalog's;
 * `knownExploit` the finding's own when it has one; own exploits come first.
 */
export function enrich(own: Intel | null, kev: readonly KevEntry[], exploits: readonly ExploitRef[]): Intel {
  const base = own ?? NO_INTEL;
  const seen = new Set(base.exploits.map((e) => `${e.source ?? ''}\u0000${e.id ?? ''}`));
  const added: ExploitRef[] = [];
  for (const e of exploits) {
    const key = `${e.source ?? ''}\u0000${e.id ?? ''}`;
    if (seen.has(key)) continue;
    seen.add(key);
    added.push(e);
  }
  const entry = kev[0];
  return {
    hasKev: base.hasKev || entry !== undefined,
    hasExploit: base.hasExploit || exploits.length > 0,
    knownExploit: base.knownExploit ?? (entry === undefined ? null : knownExploitOf(entry)),
    exploits: [...base.exploits, ...added],
  };
}

/** One FIRST EPSS score: the probability of exploitation activity in the next 30 days, and its percentile. */
export interface EpssScore {
  cveId: string;
  epss: number;
  percentile: number;
}

/** One exploit of one CVE (an Exploit-DB exploit with several CVEs is one row per CVE). */
export interface CveExploit {
  cveId: string;
  exploit: ExploitRef;
}

export const feedNames = ['kev', 'exploitdb', 'epss'] as const;
export type FeedName = (typeof feedNames)[number];

/** A parsed feed file, ready to replace the stored feed of its kind. */
export type FeedData = { version: string | null; source: string } & (
  | { feed: 'kev'; entries: KevEntry[] }
  | { feed: 'exploitdb'; entries: CveExploit[] }
  | { feed: 'epss'; entries: EpssScore[] }
);

/** What loading a feed changed. */
export interface FeedLoadResult {
  feed: FeedName;
  version: string | null;
  source: string;
  /** Rows of the feed as stored (KEV entries, (CVE, exploit) pairs, EPSS scores). */
  entries: number;
  /** Rows added, changed or removed compared with the feed loaded before. */
  changed: number;
}

/** What one `feeds load` changed: each feed, and the findings (of every tenant) whose intel fields changed. */
export interface FeedLoad {
  feeds: FeedLoadResult[];
  findingsUpdated: number;
  /** What re-deriving the risks of the re-enriched assets changed (docs/RISKS.md). */
  risks: { added: number; updated: number; removed: number };
}

/** A loaded feed as `secinv feeds status` shows it. */
export interface FeedStatus {
  feed: FeedName;
  version: string | null;
  entries: number;
  loadedAt: string;
  source: string | null;
}

/** The date a feed's version starts with, as `yyyymmdd` (KEV `2025.01.24`, EPSS `2026-09-29 (model …)`, Exploit-DB's
 * latest row date); null for a version without one (an EPSS file named without its date gives only its model). */
export function feedVersionDate(version: string | null): string | null {
  const match = /^(\d{4})[.-](\d{2})[.-](\d{2})(?!\d)/.exec(version ?? '');
  return match === null ? null : `${match[1]}${match[2]}${match[3]}`;
}

/** Whether a feed file is older than the one loaded: both versions dated, the file's before the loaded one's. */
export function isOlderFeed(incoming: string | null, loaded: string | null): boolean {
  const [a, b] = [feedVersionDate(incoming), feedVersionDate(loaded)];
  return a !== null && b !== null && a < b;
}
