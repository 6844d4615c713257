// A small seeded pseudo-random toolkit for the data generator.
//
// Generated inventories must be byte-identical for the same seed on every machine and Node version, so nothing
// here touches Math.random or the clock. sfc32 is fast, passes PractRand for our purposes and needs only 32-bit
// integer arithmetic, which JavaScript does exactly.

/** A generator of floats in [0, 1). Every call advances its state. */
export type Rng = () => number;

const TWO_POW_32 = 4294967296;

/** cyrb128: hashes a string into four 32-bit seeds, so any string (or number) can seed an Rng. */
export function hashString(input: string): [number, number, number, number] {
  let h1 = 1779033703;
  let h2 = 3144134277;
  let h3 = 1013904242;
  let h4 = 2773480762;
  for (let i = 0; i < input.length; i++) {
    const k = input.charCodeAt(i);
    h1 = h2 ^ Math.imul(h1 ^ k, 597399067);
    h2 = h3 ^ Math.imul(h2 ^ k, 2869860233);
    h3 = h4 ^ Math.imul(h3 ^ k, 951274213);
    h4 = h1 ^ Math.imul(h4 ^ k, 2716044179);
  }
  h1 = Math.imul(h3 ^ (h1 >>> 18), 597399067);
  h2 = Math.imul(h4 ^ (h2 >>> 22), 2869860233);
  h3 = Math.imul(h1 ^ (h3 >>> 17), 951274213);
  h4 = Math.imul(h2 ^ (h4 >>> 19), 2716044179);
  h1 ^= h2 ^ h3 ^ h4;
  h2 ^= h1;
  h3 ^= h1;
  h4 ^= h1;
  return [h1 >>> 0, h2 >>> 0, h3 >>> 0, h4 >>> 0];
}

/** sfc32 (Small Fast Counting) generator over four 32-bit words of state. */
export function sfc32(seedA: number, seedB: number, seedC: number, seedD: number): Rng {
  let a = seedA >>> 0;
  let b = seedB >>> 0;
  let c = seedC >>> 0;
  let d = seedD >>> 0;
  const next: Rng = () => {
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return (t >>> 0) / TWO_POW_32;
  };
  // The first outputs of sfc32 are weakly mixed; discarding a few is the customary warm-up.
  for (let i = 0; i < 12; i++) next();
  return next;
}

/**
 * An Rng keyed by a path of parts, e.g. createRng(seed, 'asset', tenant, index). Independent streams per key let the
 * generator recompute any record (such as the asset a risk points at) without replaying everything before it.
 */
export function createRng(...parts: ReadonlyArray<string | number>): Rng {
  // U+001F (unit separator) cannot occur in a seed typed on a command line, so ('a1', 2) and ('a', 12) differ.
  const [a, b, c, d] = hashString(parts.join('\u001f'));
  return sfc32(a, b, c, d);
}

/** An integer in [min, max], both inclusive. */
export function int(rng: Rng, min: number, max: number): number {
  return min + Math.floor(rng() * (max - min + 1));
}

/** A float in [min, max). */
export function float(rng: Rng, min: number, max: number): number {
  return min + rng() * (max - min);
}

/** True with probability p. */
export function chance(rng: Rng, p: number): boolean {
  return rng() < p;
}

/** Rounds to a number of decimals; used so generated scores look like the ones a scanner reports. */
export function round(value: number, decimals: number): number {
  const factor = 10 ** decimals;
  return Math.round(value * factor) / factor;
}

/** Rounds up or down with the probability that keeps the expected value equal to the input. */
export function stochasticRound(rng: Rng, value: number): number {
  const floor = Math.floor(value);
  return rng() < value - floor ? floor + 1 : floor;
}

/** Element at an index that is known to be in range; throws instead of yielding undefined. */
export function at<T>(items: readonly T[], index: number): T {
  const item = items[index];
  if (item === undefined) throw new RangeError(`index ${index} out of range 0..${items.length - 1}`);
  return item;
}

/** A uniformly chosen element of a non-empty array. */
export function pick<T>(rng: Rng, items: readonly T[]): T {
  return at(items, Math.floor(rng() * items.length));
}

/** A weighted choice among [value, weight] pairs (weights > 0). Linear: meant for short, rarely used lists. */
export function weighted<T>(rng: Rng, entries: ReadonlyArray<readonly [T, number]>): T {
  return weightedPicker(entries)(rng);
}

/**
 * Precomputes cumulative weights once, for choices made millions of times (severity of every finding, type of every
 * asset). The returned picker uses a binary search.
 */
export function weightedPicker<T>(entries: ReadonlyArray<readonly [T, number]>): (rng: Rng) => T {
  if (entries.length === 0) throw new RangeError('weightedPicker needs at least one entry');
  const values: T[] = [];
  const cumulative: number[] = [];
  let total = 0;
  for (const [value, weight] of entries) {
    if (!(weight > 0)) continue;
    total += weight;
    values.push(value);
    cumulative.push(total);
  }
  if (values.length === 0) throw new RangeError('weightedPicker needs a positive weight');
  return (rng) => {
    const target = rng() * total;
    let lo = 0;
    let hi = cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (at(cumulative, mid) > target) hi = mid;
      else lo = mid + 1;
    }
    return at(values, lo);
  };
}

/** A new array with the elements in random order (Fisher-Yates). */
export function shuffle<T>(rng: Rng, items: readonly T[]): T[] {
  const out = items.slice();
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    const tmp = at(out, i);
    out[i] = at(out, j);
    out[j] = tmp;
  }
  return out;
}

/** Up to k distinct elements, in random order. */
export function sample<T>(rng: Rng, items: readonly T[], k: number): T[] {
  return shuffle(rng, items).slice(0, Math.max(0, k));
}

const HEX_DIGITS = '0123456789abcdef';
const BYTE_HEX: readonly string[] = Array.from(
  { length: 256 },
  (_, i) => HEX_DIGITS.charAt(i >> 4) + HEX_DIGITS.charAt(i & 15),
);

/** A string of lower-case hexadecimal digits. */
export function hex(rng: Rng, length: number): string {
  let out = '';
  while (out.length < length) {
    out += at(BYTE_HEX, Math.floor(rng() * 256));
  }
  return out.slice(0, length);
}

const ALNUM = 'bcdfghjklmnpqrstvwxz2456789';

/** Lower-case alphanumerics as Kubernetes uses in generated pod-name suffixes. */
export function alnum(rng: Rng, length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += ALNUM.charAt(Math.floor(rng() * ALNUM.length));
  return out;
}

/** A version-4 UUID built from the Rng (so it is reproducible, unlike crypto.randomUUID). */
export function uuid(rng: Rng): string {
  const bytes: string[] = [];
  for (let i = 0; i < 16; i++) {
    let byte = Math.floor(rng() * 256);
    if (i === 6) byte = (byte & 0x0f) | 0x40;
    if (i === 8) byte = (byte & 0x3f) | 0x80;
    bytes.push(at(BYTE_HEX, byte));
  }
  const s = bytes.join('');
  return `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20)}`;
}

/** An integer millisecond timestamp in [startMs, endMs]. */
export function dateBetween(rng: Rng, startMs: number, endMs: number): number {
  if (endMs <= startMs) return Math.floor(startMs);
  return Math.floor(startMs + rng() * (endMs - startMs));
}

/** ISO 8601 in UTC with milliseconds, e.g. 2026-10-31T12:00:00.000Z. */
export function isoTime(ms: number): string {
  return new Date(ms).toISOString();
}

/** yyyy-MM-dd in UTC. */
export function isoDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}
