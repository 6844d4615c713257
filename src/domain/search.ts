// Text the asset list's text filters match against, computed at import so that SQL only compares stored columns.
// The SQL side (src/storage/read/assets/filters.ts) mirrors these rules; test/storage/rules.test.ts checks that they agree.

/** Separator of the tokens of an asset's metadata search text; no key or value is split by it (see metadataMatches). */
export const META_SEPARATOR = '\u001f';

/** Lower-cased keys and scalar (string, number, boolean) values of rawData, depth first, for the `metadata` filter. */
export function metadataSearchText(rawData: unknown): string {
  const tokens: string[] = [];
  const walk = (value: unknown): void => {
    if (value === null || value === undefined) return;
    if (Array.isArray(value)) value.forEach(walk);
    else if (typeof value === 'object') {
      for (const [key, inner] of Object.entries(value)) {
        tokens.push(key.toLowerCase());
        walk(inner);
      }
    } else if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
      tokens.push(String(value).toLowerCase());
  };
  walk(rawData);
  return tokens.join(META_SEPARATOR);
}

/**
 * `metadata`: a case-insensitive substring of one key or scalar value anywhere in rawData. A needle holding the
 * separator could only match across two tokens, so it matches nothing.
 */
export const metadataMatches = (searchText: string, needle: string): boolean =>
  !needle.includes(META_SEPARATOR) && searchText.includes(needle.toLowerCase());

/** `query`: a case-insensitive substring of the asset's name (an asset without a name never matches). */
export const nameMatches = (name: string | null, needle: string): boolean =>
  name !== null && name.toLowerCase().includes(needle.toLowerCase());

/** The service name after `Provider::` (lower-cased), which a bare `services` item matches for any provider. */
export const serviceName = (service: string | null): string | null =>
  service === null ? null : service.slice(service.includes('::') ? service.lastIndexOf('::') + 2 : 0).toLowerCase();

/**
 * `services`: an item with `::` matches the whole `Provider::Service` value, a bare item the service name of any
 * provider; both case-insensitively.
 */
export const serviceMatches = (service: string | null, items: readonly string[]): boolean =>
  service !== null &&
  items.some((item) =>
    item.includes('::') ? service.toLowerCase() === item.toLowerCase() : serviceName(service) === item.toLowerCase(),
  );
