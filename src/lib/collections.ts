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
