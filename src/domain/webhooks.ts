// Alerts by webhook (pipeline.md §5, docs/DESIGN.md §104): an endpoint's filters and which changes they pass, its
// secret, the id of a delivery, and when a failed delivery is tried again. Pure: storage keeps the endpoints and their
// positions in the change log, src/webhooks/ sends.
import { randomBytes } from 'node:crypto';
import { changeTypes, type ChangeType } from './changes.js';
import { findingSeverities, severityLevelValues, type FindingSeverity } from './enums.js';

/** Which changes an endpoint is sent; every filter given must pass (AND). */
export interface WebhookFilters {
  /** null: every type. */
  types: ChangeType[] | null;
  /** Findings and risks at or above it; assets pass. */
  minSeverity: FindingSeverity | null;
  /** Findings that are in KEV (or just became): other kinds do not pass. */
  kev: boolean;
  /** Findings that have a public exploit (or just got one): other kinds do not pass. */
  exploit: boolean;
}

export const NO_FILTERS: WebhookFilters = { types: null, minSeverity: null, kev: false, exploit: false };

/**
 * What the filters read of a change: its type and the tracked state the record has after it (before it, for a change
 * that removes the record). Assets have no severity; risks have neither KEV nor exploit.
 */
export interface ChangeFacts {
  type: ChangeType;
  severity?: FindingSeverity | undefined;
  hasKev?: boolean | undefined;
  hasExploit?: boolean | undefined;
}

export function passesFilters(filters: WebhookFilters, facts: ChangeFacts): boolean {
  if (filters.types !== null && !filters.types.includes(facts.type)) return false;
  const finding = facts.type.startsWith('finding.');
  if ((filters.kev || filters.exploit) && !finding) return false;
  if (filters.kev && facts.hasKev !== true) return false;
  if (filters.exploit && facts.hasExploit !== true) return false;
  if (filters.minSeverity !== null && !facts.type.startsWith('asset.')) {
    const level = facts.severity === undefined ? -1 : severityLevelValues[facts.severity];
    if (level < severityLevelValues[filters.minSeverity]) return false;
  }
  return true;
}

/** `--types a,b`: each a change type; a problem in words naming the first that is not. */
export function parseChangeTypes(text: string): { types: ChangeType[] } | { problem: string } {
  const types = [
    ...new Set(
      text
        .split(',')
        .map((t) => t.trim())
        .filter((t) => t !== ''),
    ),
  ];
  if (types.length === 0) return { problem: 'give at least one change type' };
  const unknown = types.find((t) => !(changeTypes as readonly string[]).includes(t));
  if (unknown !== undefined) return { problem: `unknown change type '${unknown}' (one of ${changeTypes.join(', ')})` };
  return { types: types as ChangeType[] };
}

export function parseSeverity(text: string): { severity: FindingSeverity } | { problem: string } {
  const severity = findingSeverities.find((s) => s === text.trim().toUpperCase());
  return severity === undefined
    ? { problem: `unknown severity '${text}' (one of ${findingSeverities.join(', ')})` }
    : { severity };
}

/** The most an endpoint's URL may hold, in characters. */
export const WEBHOOK_URL_MAX = 2048;

/**
 * What is wrong with a destination URL as written (undefined: nothing): http or https, a host, no credentials (the
 * signature authenticates the sender, and a password in the URL would be listed with it). Where it resolves is
 * src/webhooks/destinations.ts's.
 */
export function urlProblem(text: string): string | undefined {
  if (text.length > WEBHOOK_URL_MAX) return `longer than ${WEBHOOK_URL_MAX} characters`;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return `'${text}' is not a URL`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `must be http:// or https://, not ${url.protocol}`;
  if (url.hostname === '') return 'has no host';
  if (url.username !== '' || url.password !== '') return 'must not hold credentials';
  if (url.hash !== '') return 'must not have a fragment';
  return undefined;
}

/** The Standard Webhooks secret's prefix: the rest is base64 of the HMAC key. */
export const SECRET_PREFIX = 'whsec_';

/** A new signing secret: 32 random bytes, as long as the HMAC-SHA256 digest it keys. */
export const newWebhookSecret = (): string => SECRET_PREFIX + randomBytes(32).toString('base64');

export const newWebhookId = (): string => `wh_${randomBytes(8).toString('hex')}`;

/**
 * The id of the delivery of an endpoint's changes after position `from` through `through`: the same on every retry
 * of that batch (a batch's bounds are fixed once formed), another for every other batch, so a receiver deduplicates by it.
 */
export const deliveryId = (endpointId: string, from: number, through: number): string =>
  `msg_${endpointId}_${from}_${through}`;

/** A ping's id: each ping is a message of its own. */
export const pingId = (): string => `msg_ping_${randomBytes(8).toString('hex')}`;

/** The waits after the first, second, third and fourth failure of a batch; every later one waits the last. */
const RETRY_DELAYS_MS = [10_000, 60_000, 600_000, 3_600_000, 21_600_000] as const;
/** How long a batch is tried before its endpoint is disabled. */
export const RETRY_WINDOW_MS = 3 * 24 * 60 * 60 * 1000;
/** The first wait: SECINV_TEST_WEBHOOK_RETRY_MS scales the whole schedule, the window with it, by its ratio to this. */
export const FIRST_RETRY_MS = RETRY_DELAYS_MS[0];

export interface RetryPlan {
  /** Try again at this time (ms since the epoch); undefined: give up, the window is over. */
  retryAt: number | undefined;
}

/**
 * After the `failures`th failure of a batch (1 for the first) at `now`, whose first failure was at `failingSince`: the
 * next attempt after the schedule's wait, the last one at the end of the window, none after it. `scale` multiplies
 * every wait and the window (1 but in tests).
 */
export function retryPlan(failures: number, failingSince: number, now: number, scale = 1): RetryPlan {
  const end = failingSince + RETRY_WINDOW_MS * scale;
  if (now >= end) return { retryAt: undefined };
  const wait = RETRY_DELAYS_MS[Math.min(failures, RETRY_DELAYS_MS.length) - 1]! * scale;
  return { retryAt: Math.min(now + wait, end) };
}

/** A filter's words, for listings: `types=…, min-severity=HIGH, kev`; `-` for none. */
export function filtersText(filters: WebhookFilters): string {
  const parts = [
    ...(filters.types === null ? [] : [`types=${filters.types.join(',')}`]),
    ...(filters.minSeverity === null ? [] : [`min-severity=${filters.minSeverity}`]),
    ...(filters.kev ? ['kev'] : []),
    ...(filters.exploit ? ['exploit'] : []),
  ];
  return parts.length === 0 ? '-' : parts.join(' ');
}

/** An endpoint as listings show it: never its secret. */
export interface WebhookEndpoint {
  id: string;
  tenantId: string;
  url: string;
  description: string | null;
  filters: WebhookFilters;
  createdAt: string;
  enabled: boolean;
  disabledAt: string | null;
  disabledReason: string | null;
  /** The log position through which its changes were delivered (or skipped by its filters). */
  position: number;
  /** The batch being tried: its last position, and how often and since when it failed; null: none formed. */
  pending: { through: number; failures: number; failingSince: string | null; nextAttemptAt: string | null } | null;
}

export interface NewWebhook {
  id: string;
  tenantId: string;
  url: string;
  description: string | null;
  filters: WebhookFilters;
  secret: string;
  createdAt: string;
}

/** One try to send: a batch of changes, or a ping. */
export interface WebhookAttempt {
  at: string;
  deliveryId: string;
  kind: 'changes' | 'ping';
  /** How many changes it carried (0 for a ping). */
  changes: number;
  /** The receiver's HTTP status; null when none came (refused, unreachable, timed out). */
  status: number | null;
  durationMs: number;
  /** Why it failed, when no status says it (or a redirect, not followed). */
  error: string | null;
}

export const isSuccess = (status: number | null): boolean => status !== null && status >= 200 && status < 300;
