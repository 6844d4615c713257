// CVSS v3.x exploitability, computed from vectors: what makes a scanner finding `isExploitable` (docs/INGEST.md).
// Scanners' own sub-scores are rounded up (a 1.048 shows as 1.1) and some report none, so the rule reads the vector.

const AV: Readonly<Record<string, number>> = { N: 0.85, A: 0.62, L: 0.55, P: 0.2 };
const AC: Readonly<Record<string, number>> = { L: 0.77, H: 0.44 };
const UI: Readonly<Record<string, number>> = { N: 0.85, R: 0.62 };
// Privileges weigh more when the scope changes (S:C).
const PR_UNCHANGED: Readonly<Record<string, number>> = { N: 0.85, L: 0.62, H: 0.27 };
const PR_CHANGED: Readonly<Record<string, number>> = { N: 0.85, L: 0.68, H: 0.5 };

/**
 * The unrounded exploitability sub-score of a CVSS v3.0 or v3.1 vector (8.22 × AV × AC × PR × UI), or null when the
 * text is not a v3 vector: another version's prefix, or a base metric (AV, AC, PR, UI, S) missing or unknown. The
 * `CVSS:3.x/` prefix may be absent; other metrics (impact, temporal, environmental) are ignored.
 */
export function cvss3Exploitability(vector: string): number | null {
  const parts = vector.trim().split('/');
  if (parts[0]?.startsWith('CVSS:')) {
    if (parts[0] !== 'CVSS:3.0' && parts[0] !== 'CVSS:3.1') return null;
    parts.shift();
  }
  const metrics = new Map<string, string>();
  for (const part of parts) {
    const [name, value, extra] = part.split(':');
    if (name === undefined || value === undefined || extra !== undefined) return null;
    metrics.set(name, value);
  }
  const scope = metrics.get('S');
  if (scope !== 'U' && scope !== 'C') return null;
  const av = AV[metrics.get('AV') ?? ''];
  const ac = AC[metrics.get('AC') ?? ''];
  const pr = (scope === 'C' ? PR_CHANGED : PR_UNCHANGED)[metrics.get('PR') ?? ''];
  const ui = UI[metrics.get('UI') ?? ''];
  if (av === undefined || ac === undefined || pr === undefined || ui === undefined) return null;
  return 8.22 * av * ac * pr * ui;
}

/** The threshold above which a finding is exploitable. */
export const EXPLOITABILITY_THRESHOLD = 1.0;

/**
 * A finding's isExploitable: the largest exploitability over every v3 vector of the finding and its aliases is above
 * 1.0. Vectors that are not v3 (v2, v4, malformed) are skipped; with none left the finding is not exploitable.
 */
export function isExploitableByVectors(vectors: Iterable<string>): boolean {
  let best = -1;
  for (const vector of vectors) best = Math.max(best, exploitabilityOf(vector));
  return best > EXPLOITABILITY_THRESHOLD;
}

/**
 * Recent vectors' exploitability (-1 for none): a report repeats a few hundred distinct vectors over its findings, and
 * parsing each again was 2% of an ingest's CPU.
 */
const recentVectors = new Map<string, number>();
const RECENT_VECTORS = 4096;

function exploitabilityOf(vector: string): number {
  const known = recentVectors.get(vector);
  if (known !== undefined) return known;
  const score = cvss3Exploitability(vector) ?? -1;
  if (recentVectors.size >= RECENT_VECTORS) recentVectors.clear();
  recentVectors.set(vector, score);
  return score;
}
