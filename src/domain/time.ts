// One grammar for every timestamp the service reads (query parameters and imported records) and one output format.

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?([Zz]|[+-]\d{2}:\d{2}))?$/;

const daysInMonth = (y: number, m: number): number =>
  m === 2 ? (y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0) ? 29 : 28) : [4, 6, 9, 11].includes(m) ? 30 : 31;

/** Whether the fields name a real calendar day and time of day (no leap seconds). */
const validFields = (y: number, mo: number, d: number, h: number, mi: number, s: number): boolean =>
  mo >= 1 && mo <= 12 && d >= 1 && d <= daysInMonth(y, mo) && h <= 23 && mi <= 59 && s <= 59;

/**
 * Parses RFC 3339 (`T`/`Z` any case, 0 to 9 fractional digits truncated to milliseconds, `Z` or `±hh:mm`) or a bare
 * `yyyy-MM-dd` (midnight UTC). Returns epoch milliseconds, or null when the text is not such a timestamp.
 */
export function parseTimestamp(text: string): number | null {
  const m = RFC3339.exec(text);
  if (!m) return null;
  const [, ys, mos, ds, hs, mis, ss, frac, zone] = m;
  const y = Number(ys),
    mo = Number(mos),
    d = Number(ds);
  if (hs === undefined) return validFields(y, mo, d, 0, 0, 0) ? utc(y, mo, d, 0, 0, 0, 0) : null;
  const h = Number(hs),
    mi = Number(mis),
    s = Number(ss);
  if (!validFields(y, mo, d, h, mi, s)) return null;
  const ms = frac === undefined ? 0 : Number(frac.slice(0, 3).padEnd(3, '0'));
  let offset = 0;
  if (zone !== undefined && zone !== 'Z' && zone !== 'z') {
    const oh = Number(zone.slice(1, 3)),
      om = Number(zone.slice(4, 6));
    if (oh > 23 || om > 59) return null;
    offset = (zone.startsWith('-') ? -1 : 1) * (oh * 60 + om) * 60_000;
  }
  return utc(y, mo, d, h, mi, s, ms) - offset;
}

// Date.UTC maps years 0-99 to 1900-1999, so set the full year explicitly.
function utc(y: number, mo: number, d: number, h: number, mi: number, s: number, ms: number): number {
  const date = new Date(Date.UTC(2000, mo - 1, d, h, mi, s, ms));
  date.setUTCFullYear(y, mo - 1, d);
  return date.getTime();
}

/** The one output format: `yyyy-MM-ddTHH:mm:ss.SSSZ`. Its text order is its time order, so it is stored as is. */
export const formatTimestamp = (ms: number): string => new Date(ms).toISOString();

/**
 * Recent answers of normalizeTimestamp: the records of one scan or import repeat a few timestamps (the scan's time) over
 * and over, and parsing and formatting each again was 2% of an ingest.
 */
const recentTimestamps = new Map<string, string | null>();
const RECENT_TIMESTAMPS = 1024;

/** Normalises a timestamp text to the output format, or null when it is not one. */
export function normalizeTimestamp(text: string): string | null {
  const known = recentTimestamps.get(text);
  if (known !== undefined) return known;
  const normalized = normalizeUncached(text);
  if (recentTimestamps.size >= RECENT_TIMESTAMPS) recentTimestamps.clear();
  recentTimestamps.set(text, normalized);
  return normalized;
}

/** The output format itself, which generated and re-imported files hold throughout. */
const CANONICAL = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function normalizeUncached(text: string): string | null {
  // Already in the output format (generated and re-imported files, where few timestamps repeat): a real instant formats
  // back to the same text, so it is checked and kept rather than formatted again.
  if (CANONICAL.test(text)) return canonicalInstant(text) ? text : null;
  const ms = parseTimestamp(text);
  if (ms === null) return null;
  const out = formatTimestamp(ms);
  // Offsets can push year 0000 or 9999 out of the four-digit range, which would break text ordering.
  return out.length === 24 ? out : null;
}

/**
 * Whether a text of the output format's shape names a real instant: parseTimestamp's rule, on the digits at their fixed
 * positions (a regular expression and a Date per timestamp were 1.5 s of a 1M-finding import).
 */
function canonicalInstant(text: string): boolean {
  const n = (from: number, to: number) => Number(text.slice(from, to));
  return validFields(n(0, 4), n(5, 7), n(8, 10), n(11, 13), n(14, 16), n(17, 19));
}

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
/** `yyyy-MM-dd` calendar dates (knownExploit dueDate/dateAdded) stay dates. */
export const isCalendarDate = (text: string): boolean => DATE_ONLY.test(text) && parseTimestamp(text) !== null;
