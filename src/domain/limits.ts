// How long an indexed text may be, in UTF-8 bytes, so that a file imports or fails the same on SQLite and PostgreSQL
// (docs/DESIGN.md §34). PostgreSQL refuses a b-tree entry over 2,704 bytes, all its key columns together; SQLite has
// no such limit. The widest keys hold four texts (tenant, asset, vulnerability and alias, check or VEX ids): a tenant
// id is a UUID (36 bytes), so 36 + 1024 + 512 + 512 bytes, plus 24 of headers, stay 596 bytes under it without
// counting on compression. Ids the API types as UUIDs (tenant, environment, integration, asset group and exemption
// ids) need no limit of their own.

/**
 * Asset and risk ids, and the other indexed texts: asset names, regions, services and resource types, package and
 * target names, purls, risk type ids, VEX products.
 */
export const LONG_KEY_BYTES = 1024;
/** Vulnerability, alias, check and VEX document ids: each shares a key with three other texts. */
export const SHORT_KEY_BYTES = 512;

/** The length of a text in UTF-8 bytes. */
export const utf8Bytes = (value: string): number => Buffer.byteLength(value, 'utf8');

/**
 * Why a text is too long to be indexed, or null. `stored` is the form the database indexes when it differs (a
 * lower- or upper-cased copy, which can be longer: `İ` is 2 bytes, its lower case 3).
 */
export function lengthProblem(value: string, maxBytes: number, stored: string = value): string | null {
  // A UTF-16 unit is at most 3 bytes of UTF-8: most texts need no count.
  if (value.length * 3 <= maxBytes && stored.length * 3 <= maxBytes) return null;
  const bytes = Math.max(utf8Bytes(value), utf8Bytes(stored));
  return bytes <= maxBytes ? null : `must be at most ${maxBytes} bytes long in UTF-8, not ${bytes}`;
}
