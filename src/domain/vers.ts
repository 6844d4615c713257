// Version ranges in the `vers` syntax of the Package URL project (`vers:<scheme>/<constraint>|<constraint>…`), as
// CycloneDX VEX writes them in `affects[].versions[].range`. No maintained npm package reads them (docs/DESIGN.md, "VEX
// version ranges"), so this is the spec's own algorithm over the schemes secinv can order: `semver` and `npm` (SemVer
// 2.0 precedence), `maven` (release numbers and the usual qualifiers) and `generic` (dot-separated numbers). A range
// of another scheme is refused by the reader; a version a scheme cannot read is in no range (undecided, never a match).

export const VERS_SCHEMES = ['semver', 'npm', 'maven', 'generic'] as const;
export type VersScheme = (typeof VERS_SCHEMES)[number];

type Comparator = '=' | '!=' | '<' | '<=' | '>' | '>=';
interface Constraint {
  comparator: Comparator;
  version: string;
}
export interface VersRange {
  scheme: VersScheme;
  /** Null for `*`, every version. */
  constraints: Constraint[] | null;
}

/** Compares two versions of a scheme: negative, zero or positive; null when either is not a version of it. */
type Compare = (a: string, b: string) => number | null;

const numbers = (a: readonly number[], b: readonly number[]): number => {
  for (let i = 0; i < Math.max(a.length, b.length); i += 1) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return Math.sign(d);
  }
  return 0;
};

/** `2.4`, `4.1.0`: numbers and dots only; trailing zeros do not count (`2.4` = `2.4.0`). */
const generic: Compare = (a, b) => {
  const parse = (v: string) => (/^\d+(\.\d+)*$/.test(v) ? v.split('.').map(Number) : null);
  const x = parse(a);
  const y = parse(b);
  return x === null || y === null ? null : numbers(x, y);
};

const SEMVER = /^v?(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+[0-9A-Za-z.-]+)?$/;
/** SemVer 2.0 precedence: build metadata is ignored, a pre-release is below its release. */
const semver: Compare = (a, b) => {
  const x = SEMVER.exec(a);
  const y = SEMVER.exec(b);
  if (x === null || y === null) return null;
  const core = numbers(
    [1, 2, 3].map((i) => Number(x[i])),
    [1, 2, 3].map((i) => Number(y[i])),
  );
  if (core !== 0) return core;
  const [p, q] = [x[4], y[4]];
  if (p === undefined || q === undefined) return p === q ? 0 : p === undefined ? 1 : -1;
  const ps = p.split('.');
  const qs = q.split('.');
  for (let i = 0; i < Math.max(ps.length, qs.length); i += 1) {
    const [s, t] = [ps[i], qs[i]];
    if (s === undefined || t === undefined) return s === undefined ? -1 : 1;
    const [sn, tn] = [/^\d+$/.test(s), /^\d+$/.test(t)];
    const d = sn && tn ? Math.sign(Number(s) - Number(t)) : sn ? -1 : tn ? 1 : s < t ? -1 : s > t ? 1 : 0;
    if (d !== 0) return d;
  }
  return 0;
};

/** Maven's qualifiers in order; `ga`, `final`, `release` and none are the release itself. */
const QUALIFIERS = ['alpha', 'beta', 'milestone', 'rc', 'snapshot', '', 'sp'];
const ALIASES: Record<string, string> = {
  a: 'alpha',
  b: 'beta',
  m: 'milestone',
  cr: 'rc',
  ga: '',
  final: '',
  release: '',
};
type MavenItem = number | string;
function mavenItems(version: string): MavenItem[] | null {
  if (!/^[0-9A-Za-z.-]+$/.test(version)) return null;
  const items = (version.toLowerCase().match(/\d+|[a-z]+/g) ?? []).map((t): MavenItem =>
    /^\d/.test(t) ? Number(t) : (ALIASES[t] ?? t),
  );
  // `1.0` = `1`, `1.0-ga` = `1`: trailing release markers do not count.
  while (items.length > 0 && (items.at(-1) === 0 || items.at(-1) === '')) items.pop();
  return items;
}
const rankOf = (q: string): number => (QUALIFIERS.includes(q) ? QUALIFIERS.indexOf(q) : QUALIFIERS.length);
/**
 * Maven's ComparableVersion for the versions releases have: numbers compare as numbers, a number is above any
 * qualifier, known qualifiers by their order (unknown ones after `sp`, by their text), a missing item is `0` or the
 * release. The list nesting `-` makes in Maven's own algorithm (`1-1` against `1.1`) is not modelled.
 */
const maven: Compare = (a, b) => {
  const x = mavenItems(a);
  const y = mavenItems(b);
  if (x === null || y === null) return null;
  for (let i = 0; i < Math.max(x.length, y.length); i += 1) {
    const [s, t] = [x[i], y[i]];
    let d: number;
    if (typeof s === 'number' && typeof t === 'number') d = Math.sign(s - t);
    else if (typeof s === 'number') d = t === undefined ? Math.sign(s) : 1;
    else if (typeof t === 'number') d = s === undefined ? -Math.sign(t) : -1;
    else {
      const [q, r] = [s ?? '', t ?? ''];
      d = rankOf(q) !== rankOf(r) ? Math.sign(rankOf(q) - rankOf(r)) : q < r ? -1 : q > r ? 1 : 0;
    }
    if (d !== 0) return d;
  }
  return 0;
};

const COMPARE: Record<VersScheme, Compare> = { semver, npm: semver, maven, generic };

/**
 * A `vers` text as a range; a problem names what is wrong with it. `unsupported` marks a well-formed range of a scheme
 * secinv cannot order (deb, rpm, pypi…).
 */
export function parseVers(text: string): VersRange | { problem: string; unsupported?: true } {
  const match = /^vers:([a-z0-9.+-]+)\/(.+)$/i.exec(text.replace(/\s+/g, ''));
  if (match === null) return { problem: `is not a vers range (vers:<scheme>/<constraints>): '${text}'` };
  const scheme = (match[1] ?? '').toLowerCase();
  const body = match[2] ?? '';
  if (!(VERS_SCHEMES as readonly string[]).includes(scheme))
    return {
      problem: `uses the vers scheme '${scheme}', which secinv cannot order (it orders ${VERS_SCHEMES.join(', ')})`,
      unsupported: true,
    };
  const known = scheme as VersScheme;
  if (body === '*') return { scheme: known, constraints: null };
  const constraints: Constraint[] = [];
  for (const part of body.split('|')) {
    const m = /^(!=|<=|>=|<|>|=)?(.+)$/.exec(part);
    let version: string;
    try {
      version = decodeURIComponent(m?.[2] ?? '');
    } catch {
      return { problem: `has a badly percent-encoded version in '${text}'` };
    }
    if (m === null || version === '' || version === '*')
      return { problem: `has an empty or misplaced constraint in '${text}'` };
    if (COMPARE[known](version, version) === null)
      return { problem: `has '${version}', which is not a ${known} version secinv can order, in '${text}'` };
    constraints.push({ comparator: (m[1] ?? '=') as Comparator, version });
  }
  return ordered({ scheme: known, constraints }, text);
}

/** The spec's rule: range constraints, in version order, alternate between lower and upper bounds. */
function ordered(range: VersRange, text: string): VersRange | { problem: string } {
  const compare = COMPARE[range.scheme];
  const bounds = (range.constraints ?? [])
    .filter((c) => c.comparator !== '=' && c.comparator !== '!=')
    .sort((a, b) => compare(a.version, b.version) ?? 0);
  for (let i = 1; i < bounds.length; i += 1) {
    const lower = (c: Constraint | undefined) => c?.comparator.startsWith('>') === true;
    if (lower(bounds[i - 1]) === lower(bounds[i]))
      return { problem: `has two ${lower(bounds[i]) ? 'lower' : 'upper'} bounds in a row in '${text}'` };
  }
  return {
    scheme: range.scheme,
    constraints: [...(range.constraints ?? []).filter((c) => c.comparator === '=' || c.comparator === '!='), ...bounds],
  };
}

/** Whether the version is in the range; null when the scheme cannot read it (undecided, so no match). */
export function inVers(version: string, range: VersRange): boolean | null {
  const compare = COMPARE[range.scheme];
  const self = compare(version, version);
  if (self === null) return null;
  if (range.constraints === null) return true;
  const holds = (c: Constraint): boolean => {
    const d = compare(version, c.version) ?? NaN;
    return { '=': d === 0, '!=': d !== 0, '<': d < 0, '<=': d <= 0, '>': d > 0, '>=': d >= 0 }[c.comparator];
  };
  const equal = range.constraints.filter((c) => c.comparator === '=');
  const unequal = range.constraints.filter((c) => c.comparator === '!=');
  const bounds = range.constraints.filter((c) => c.comparator !== '=' && c.comparator !== '!=');
  if (equal.some(holds)) return true;
  if (unequal.some((c) => !holds(c))) return false;
  // Bounds in version order make intervals: a leading upper bound closes one open below, a trailing lower bound opens
  // one above, and each lower bound pairs with the upper bound after it.
  for (let i = 0; i < bounds.length; i += 1) {
    const c = bounds[i] as Constraint;
    if (c.comparator.startsWith('<')) {
      if (i === 0 && holds(c)) return true;
      continue;
    }
    const next = bounds[i + 1];
    if (holds(c) && (next === undefined || holds(next))) return true;
  }
  // Only `!=` constraints: every other version is in.
  return equal.length === 0 && bounds.length === 0 && unequal.length > 0;
}
