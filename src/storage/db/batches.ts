// Walking a tenant's assets in keyset batches.
import type { SelectQueryBuilder } from 'kysely';
import { chunks } from '../../lib/collections.js';
import type { Database } from './tables.js';

/**
 * Runs `each` over a tenant's assets in id order, `size` at a time: every asset (keyset pages, so the last page costs
 * what the first does), or the given ones. `select` is the asset query without its limit, ordered by `assets.id`.
 */
export async function forAssetBatches<R extends { id: string }>(
  select: () => SelectQueryBuilder<Database, 'assets', R>,
  scope: 'all' | ReadonlySet<string>,
  size: number,
  each: (assets: R[]) => Promise<void>,
): Promise<void> {
  if (scope !== 'all') {
    for (const ids of chunks([...scope].sort(), size)) {
      const assets = await select().where('assets.id', 'in', ids).execute();
      if (assets.length > 0) await each(assets);
    }
    return;
  }
  let after: string | null = null;
  for (;;) {
    const assets: R[] = await (after === null ? select() : select().where('assets.id', '>', after))
      .limit(size)
      .execute();
    if (assets.length === 0) return;
    await each(assets);
    after = assets[assets.length - 1]!.id;
  }
}
