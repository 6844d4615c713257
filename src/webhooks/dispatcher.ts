// The webhook dispatcher of a server process (pipeline.md §5, docs/DESIGN.md §104): claims the endpoints that have
// something to send, and sends each one's batches in log order, the next once the previous was received. A batch that
// fails is tried again after the schedule's wait (src/domain/webhooks.ts) for three days, then its endpoint is
// disabled; a 410 disables it at once. At least once: the position moves only after a 2xx, so a batch whose answer
// was lost (a timeout, the process killed) is sent again under the same webhook-id.
import { isSuccess, retryPlan, type WebhookAttempt } from '../domain/webhooks.js';
import { spliced } from '../lib/collections.js';
import type { ClaimedWebhook, Storage, WebhookBatch } from '../storage/index.js';
import { sendSigned, type SendResult } from './send.js';

/** A delivery's bounds (pipeline.md §5). */
export const MAX_BATCH_CHANGES = 500;
export const MAX_BATCH_BYTES = 1024 * 1024;

export interface DispatcherOptions {
  /** Who claims: unique per process and start. */
  owner: string;
  /** How often to look for work when nothing wakes it (another process's writes, a retry that came due). */
  pollMs: number;
  timeoutMs: number;
  /** How long a claim lasts without being renewed: longer than one batch's forming and sending. */
  leaseMs: number;
  /** Multiplies the retry schedule and its window (1; tests make it small). */
  retryScale: number;
  allowPrivate: boolean;
  /** Endpoints sent to at once. */
  concurrency?: number;
  maxChanges?: number;
  maxBytes?: number;
  now?: () => Date;
  /** Called with `send` once a batch is formed and fixed, before it is sent: for fault tests. */
  onPhase?: ((phase: string) => void) | undefined;
  /** What happened to each attempt (never a secret, a URL or a body). */
  log?: (event: WebhookEvent) => void;
}

export interface WebhookEvent {
  webhookId: string;
  deliveryId?: string;
  /** `delivered`, `failed` (retried), `disabled`, `error` (the dispatcher's own, retried at the next round). */
  outcome: string;
  changes?: number;
  status?: number | null;
  message?: string;
}

export interface Dispatcher {
  /** Something was written here: look now. */
  wake(): void;
  /** Stops after the batches being sent, releasing their claims. */
  stop(): Promise<void>;
}

/** The body of a batch: `{"type": "changes", "tenantId", "changes": [...]}`, the changes' JSON spliced in. */
export const changesBody = (tenantId: string, items: readonly Buffer[]): Buffer =>
  spliced(`{"type":"changes","tenantId":${JSON.stringify(tenantId)},"changes":[`, items, ']}');

/** The envelope's bytes around the changes, so that the whole body stays within MAX_BATCH_BYTES. */
const envelopeBytes = (tenantId: string) => changesBody(tenantId, []).length;

const describe = (result: SendResult) => result.error ?? `HTTP ${result.status}`;

export function startDispatcher(storage: Storage, options: DispatcherOptions): Dispatcher {
  const now = options.now ?? (() => new Date());
  const concurrency = options.concurrency ?? 8;
  const inFlight = new Map<string, Promise<void>>();
  let stopped = false;
  let woken: (() => void) | undefined;
  let nudged = false;
  /** The earliest retry this process scheduled: the loop looks again then rather than at its next poll. */
  let nextRetry = Number.POSITIVE_INFINITY;
  const log = (event: WebhookEvent) => options.log?.(event);

  const wake = () => {
    nudged = true;
    woken?.();
  };

  const attemptOf = (batch: WebhookBatch, at: Date, result: SendResult): WebhookAttempt => ({
    at: at.toISOString(),
    deliveryId: batch.deliveryId,
    kind: 'changes',
    changes: batch.items.length,
    status: result.status,
    durationMs: result.durationMs,
    error: result.error,
  });

  /** What to do after a failed attempt: when to try again, or why the endpoint is disabled. */
  const afterFailure = (batch: WebhookBatch, attempt: WebhookAttempt, result: SendResult) => {
    if (result.status === 410) return { disable: `the receiver answered 410 Gone at ${attempt.at}` };
    const failures = batch.failures + 1;
    const since = batch.failingSince ?? attempt.at;
    const plan = retryPlan(failures, Date.parse(since), Date.parse(attempt.at), options.retryScale);
    if (plan.retryAt === undefined)
      return { disable: `failing since ${since} (${failures} attempts), last: ${describe(result)}` };
    nextRetry = Math.min(nextRetry, plan.retryAt);
    return { retryAt: new Date(plan.retryAt).toISOString() };
  };

  /** Sends the claimed endpoint's batches until it is caught up, a batch fails, or the server stops. */
  const serve = async (claim: ClaimedWebhook): Promise<void> => {
    const id = claim.endpoint.id;
    const limits = {
      maxChanges: options.maxChanges ?? MAX_BATCH_CHANGES,
      maxBytes: (options.maxBytes ?? MAX_BATCH_BYTES) - envelopeBytes(claim.endpoint.tenantId),
    };
    for (;;) {
      if (stopped) return storage.releaseWebhook(claim);
      const batch = await storage.webhookBatch(claim, limits, now(), options.leaseMs);
      if (batch === 'lost') return;
      // Caught up: the claim goes at once (the round after this one claims it again if more was written meanwhile).
      if (batch === 'idle') return storage.releaseWebhook(claim);
      options.onPhase?.('send');
      const body = changesBody(claim.endpoint.tenantId, batch.items);
      const at = now();
      const result = await sendSigned(claim.endpoint.url, claim.secret, batch.deliveryId, body, options);
      const attempt = attemptOf(batch, at, result);
      const event = { webhookId: id, deliveryId: batch.deliveryId, changes: batch.items.length, status: result.status };
      if (isSuccess(result.status)) {
        log({ ...event, outcome: 'delivered' });
        if (!(await storage.webhookDelivered(claim, batch, attempt, now(), options.leaseMs))) return;
        continue;
      }
      const outcome = afterFailure(batch, attempt, result);
      log({ ...event, outcome: 'disable' in outcome ? 'disabled' : 'failed', message: describe(result) });
      await storage.webhookFailed(claim, batch, attempt, outcome);
      return;
    }
  };

  const round = async () => {
    const claims = await storage.claimWebhooks(options.owner, now(), options.leaseMs, concurrency - inFlight.size);
    for (const claim of claims) {
      const id = claim.endpoint.id;
      const running = serve(claim)
        .catch((error: unknown) => {
          // Not the receiver's doing (the database away): the claim expires and the batch is tried again.
          log({ webhookId: id, outcome: 'error', message: (error as Error).message });
        })
        .finally(() => {
          inFlight.delete(id);
          // More may have been written while it was sending.
          wake();
        });
      inFlight.set(id, running);
    }
  };

  const loop = async () => {
    while (!stopped) {
      nudged = false;
      await round().catch((error: unknown) =>
        log({ webhookId: '-', outcome: 'error', message: (error as Error).message }),
      );
      if (stopped) return;
      if (nudged) continue;
      const wait = Math.max(0, Math.min(options.pollMs, nextRetry - now().getTime()));
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, wait);
        woken = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      woken = undefined;
      if (nextRetry <= now().getTime()) nextRetry = Number.POSITIVE_INFINITY;
    }
  };

  const running = loop();
  return {
    wake,
    stop: async () => {
      stopped = true;
      woken?.();
      await running;
      await Promise.all(inFlight.values());
    },
  };
}
