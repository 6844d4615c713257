// Generic helpers for lists and maps.

/** Splits a list for `in (…)` lists of a bounded length. */
export const chunks = <T>(items: readonly T[], size = 500): T[][] => {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
};

/** Appends a value to the list of a key (creating it): grouping rows without copying the list at each row. */
export function appendTo<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

const COMMA = Buffer.from(',');

/** `head`, the JSON items separated by commas, then `tail`, as one Buffer: a JSON array spliced from stored bytes. */
export function spliced(head: Buffer | string, items: readonly Buffer[], tail: Buffer | string): Buffer {
  const parts: Buffer[] = [typeof head === 'string' ? Buffer.from(head) : head];
  items.forEach((item, i) => {
    if (i > 0) parts.push(COMMA);
    parts.push(item);
  });
  parts.push(typeof tail === 'string' ? Buffer.from(tail) : tail);
  return Buffer.concat(parts);
}
