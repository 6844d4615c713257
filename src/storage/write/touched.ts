// What a bulk write changed, as the run goes: the tenants it wrote to (their data versions move at the end) and, per
// tenant, the assets whose derived fields and risks must be computed again (or all of them, after a write that may
// change any asset: exemptions, groups, VEX). Every write step reports here, so that the derive and settle steps act on
// exactly what moved: this is the one place a record of the run's changes hangs from.
export interface Touched {
  /** Records that the run wrote to the tenant; with an asset, that the asset's derived state may have moved. */
  touch(tenantId: string, assetId?: string): void;
  /** Records a write to the tenant that changes no asset (the tenant's own record). */
  wrote(tenantId: string): void;
  /** The tenants and assets to derive again since the last take, and forgets them. */
  take(): Map<string, 'all' | Set<string>>;
  /** The tenants to derive again, not forgotten. */
  tenants(): Iterable<string>;
  /** Every tenant the run wrote to. */
  written(): Iterable<string>;
}

export function touchedByRun(): Touched {
  const touched = new Map<string, 'all' | Set<string>>();
  const written = new Set<string>();
  return {
    touch(tenantId, assetId) {
      written.add(tenantId);
      const current = touched.get(tenantId);
      if (assetId === undefined) touched.set(tenantId, 'all');
      else if (current === undefined) touched.set(tenantId, new Set([assetId]));
      else if (current !== 'all') current.add(assetId);
    },
    wrote: (tenantId) => void written.add(tenantId),
    take() {
      const taken = new Map(touched);
      touched.clear();
      return taken;
    },
    tenants: () => touched.keys(),
    written: () => written,
  };
}
