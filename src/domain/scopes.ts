// What a key may do (pipeline.md §1): `read`, the four operations and their extensions; `ingest`, uploading scans and
// reading the scans it uploaded. A key holds one or more; keys made before scopes existed hold `read`.
export const scopes = ['read', 'ingest'] as const;
export type Scope = (typeof scopes)[number];

/** The scopes of a new key when none are given: the meaning every key had before. */
export const DEFAULT_SCOPES: readonly Scope[] = ['read'];

/** `read,ingest` (any order, spaces allowed, each once) as a sorted list, or the problem with it. */
export function parseScopes(text: string): { scopes: Scope[] } | { problem: string } {
  const given = text.split(',').map((item) => item.trim());
  const unknown = given.filter((item) => !(scopes as readonly string[]).includes(item));
  if (unknown.length > 0)
    return {
      problem: `unknown scope ${unknown.map((u) => `'${u}'`).join(', ')}: each must be one of ${scopes.join(', ')}`,
    };
  return { scopes: scopes.filter((scope) => given.includes(scope)) };
}

/** The stored form: the scopes in their fixed order, comma-separated. */
export const scopesText = (held: readonly Scope[]): string => scopes.filter((s) => held.includes(s)).join(',');

/** A stored list read back; an unknown word (a newer version's scope) grants nothing here. */
export const storedScopes = (text: string): Scope[] => scopes.filter((scope) => text.split(',').includes(scope));
