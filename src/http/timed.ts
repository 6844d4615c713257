// Bodies that move with the clock (docs/DESIGN.md §107): a finding's `isOverdue` turns true when its due date passes,
// and a metric's current interval when the day turns, with no write to move the data version. Their ETags and kept
// bodies take one more part: the latest due date already passed (and, for the metrics, today's date), so a body is
// answered again until the next due date passes. The two boundaries are read once per tenant and data version, and
// again only once the next one is reached.
import { lruCache } from '../lib/lru.js';
import type { Storage, TenantScope } from '../storage/index.js';

interface Epoch {
  dataVersion: number;
  last: string | null;
  next: string | null;
}

/** The tenant's due epoch: the latest due date before now of a finding not exempted ('' when none). */
export function dueEpochs(storage: Pick<Storage, 'dueBoundaries'>): (scope: TenantScope) => Promise<string> {
  const epochs = lruCache<Epoch>(10_000);
  return async (scope) => {
    const now = new Date().toISOString();
    const known = epochs.get(scope.tenantId);
    if (known !== undefined && known.dataVersion === scope.dataVersion && (known.next === null || now < known.next))
      return known.last ?? '';
    const { last, next } = await storage.dueBoundaries(scope, now);
    epochs.set(scope.tenantId, { dataVersion: scope.dataVersion, last, next });
    return last ?? '';
  };
}
