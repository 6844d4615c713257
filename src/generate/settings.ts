// Generator options, their validation into settings, and the time units every part uses.

export interface GenerateOptions {
  seed: string | number;
  /** Number of tenants. */
  tenants: number;
  /** Assets per tenant. */
  assets: number;
  /** Average vulnerability findings per asset (some assets have none, some up to about twice as many). */
  findingsPerAsset: number;
  /** Risks per tenant. */
  risks: number;
  /** The moment the inventory describes; every timestamp lies within about two years before it. */
  now?: Date;
}

/** The default `now`: fixed, so output never depends on when it was generated. */
export const DEFAULT_NOW = new Date('2026-11-01T00:00:00.000Z');

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;
export const HISTORY = 730 * DAY;

/** Fixed first segment of every asset resource name. */
export const ASSET_ID_PREFIX = 'sirn';
/** The first assets of every tenant share their ids (with different contents), to exercise tenant isolation. */
export const SHARED_ASSET_IDS = 5;
export const MAX_GROUP_MEMBERS = 200;

export interface Settings {
  seed: string;
  tenants: number;
  assets: number;
  findingsPerAsset: number;
  risks: number;
  now: number;
}

export function settingsOf(opts: GenerateOptions): Settings {
  const count = (name: string, value: number): number => {
    if (!Number.isSafeInteger(value) || value < 0)
      throw new RangeError(`${name} must be a non-negative integer, not ${value}`);
    return value;
  };
  if (!Number.isFinite(opts.findingsPerAsset) || opts.findingsPerAsset < 0) {
    throw new RangeError(`findingsPerAsset must be a non-negative number, not ${opts.findingsPerAsset}`);
  }
  const now = (opts.now ?? DEFAULT_NOW).getTime();
  if (!Number.isFinite(now)) throw new RangeError('now must be a valid date');
  return {
    seed: String(opts.seed),
    tenants: count('tenants', opts.tenants),
    assets: count('assets', opts.assets),
    findingsPerAsset: opts.findingsPerAsset,
    risks: count('risks', opts.risks),
    now,
  };
}
