// Counts of matches kept per (tenant, data version, filters).
import type { Kysely } from 'kysely';
import { lruCache } from '../../lib/lru.js';
import type { Database } from '../db/tables.js';
import { dataVersion } from '../tx/tenant.js';

/**
 * Count of matches, computed once per (tenant, data version, filters): data changes only through writes that bump the
 * version. The version is read inside the caller's read transaction, with the rows it counts, so a count is never
 * filed under a version whose rows it did not see (the version of the request's key was read before, outside it).
 */
export function countCache() {
  const counts = lruCache<number>(2000);
  return async (
    db: Kysely<Database>,
    tenantId: string,
    filters: unknown,
    count: (dataVersion: number) => Promise<number>,
    /** The version as the caller's transaction read it already. */
    known?: number,
  ): Promise<number> => {
    const version = known ?? (await dataVersion(db, tenantId));
    const key = `${tenantId}\u0000${version}\u0000${JSON.stringify(filters)}`;
    let total = counts.get(key);
    if (total === undefined) {
      total = await count(version);
      counts.set(key, total);
    }
    return total;
  };
}
