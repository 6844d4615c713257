// Feed intel for findings being written or re-enriched: the KEV entries and exploits of a set of keys (ids and
// aliases, upper-cased), read from the global feed tables. The rule that combines them with a finding's own values is
// src/domain/intel.ts.
import type { Kysely } from 'kysely';
import { enrich, intelKeys, type ExploitRef, type Intel, type KevEntry } from '../../domain/intel.js';
import type { Database } from '../db/tables.js';

const CHUNK = 500;

export interface FeedIntel {
  kev: Map<string, KevEntry>;
  exploits: Map<string, ExploitRef[]>;
}

/** The KEV entries and exploits of the given keys. */
export async function feedIntel(db: Kysely<Database>, keys: Iterable<string>): Promise<FeedIntel> {
  const all = [...new Set(keys)];
  const kev = new Map<string, KevEntry>();
  const exploits = new Map<string, ExploitRef[]>();
  for (let i = 0; i < all.length; i += CHUNK) {
    const chunk = all.slice(i, i + CHUNK);
    for (const row of await db
      .selectFrom('feed_kev')
      .select(['cve_id', 'entry'])
      .where('cve_id', 'in', chunk)
      .execute())
      kev.set(row.cve_id, JSON.parse(row.entry) as KevEntry);
    const rows = await db
      .selectFrom('feed_exploits')
      .select(['cve_id', 'entry'])
      .where('cve_id', 'in', chunk)
      .orderBy('cve_id')
      .orderBy('exploit_id')
      .execute();
    for (const row of rows) {
      const list = exploits.get(row.cve_id) ?? [];
      list.push(JSON.parse(row.entry) as ExploitRef);
      exploits.set(row.cve_id, list);
    }
  }
  return { kev, exploits };
}

/**
 * A reader of feed intel that keeps what it read, for one feed load: the feeds no longer change once stored, and the
 * same CVEs come back in batch after batch of findings (a first Exploit-DB load over 1,000,000 findings read the
 * entries of the same few hundred CVEs 313 times: 0.7 s of statements and as long again parsing them).
 */
export function feedIntelReader(db: Kysely<Database>): (keys: Iterable<string>) => Promise<FeedIntel> {
  const known: FeedIntel = { kev: new Map(), exploits: new Map() };
  const looked = new Set<string>();
  return async (keys) => {
    const missing = [...new Set(keys)].filter((k) => !looked.has(k));
    if (missing.length === 0) return known;
    const read = await feedIntel(db, missing);
    for (const k of missing) looked.add(k);
    for (const [k, entry] of read.kev) known.kev.set(k, entry);
    for (const [k, list] of read.exploits) known.exploits.set(k, list);
    return known;
  };
}

/** True when a feed that adds to findings (KEV, Exploit-DB) has been loaded: else writes skip the lookups. */
export async function hasFindingFeeds(db: Kysely<Database>): Promise<boolean> {
  const row = await db.selectFrom('feeds').select('feed').where('feed', 'in', ['kev', 'exploitdb']).executeTakeFirst();
  return row !== undefined;
}

/** A finding's intel under the loaded feeds: its own values plus what its keys find. */
export function intelOf(
  intel: FeedIntel,
  own: Intel | null,
  vulnerabilityId: string,
  aliases: readonly string[],
): Intel {
  const keys = intelKeys(vulnerabilityId, aliases);
  return enrich(
    own,
    keys.flatMap((k) => intel.kev.get(k) ?? []),
    keys.flatMap((k) => intel.exploits.get(k) ?? []),
  );
}
