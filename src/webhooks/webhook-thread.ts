// A server's webhook dispatcher on a thread of its own (pipeline.md §5, docs/DESIGN.md §104): forming a batch reads
// and serialises up to 500 changes with their records, and signing hashes up to a megabyte, work that must not hold
// the thread answering requests. The thread opens the database itself, as its owner (the API role cannot read the
// endpoints); this side wakes it when a scan applied here committed, and stops it with the server.
import { messagedWorker, type ToLoopThread } from '../lib/thread.js';
import type { WebhookEvent } from './dispatcher.js';

export interface WebhookThreadOptions {
  databaseUrl: string;
  pollMs: number;
  timeoutMs: number;
  leaseMs: number;
  retryScale: number;
  allowPrivate: boolean;
  /** Tests only: the point at which the thread kills the process (SECINV_TEST_WEBHOOK_KILL_AT). */
  killAt?: string | undefined;
  onEvent: (event: WebhookEvent) => void;
}

export type FromWebhookThread = { type: 'event'; event: WebhookEvent };

export interface WebhookThread {
  wake(): void;
  stop(): Promise<void>;
}

export function startWebhookThread(options: WebhookThreadOptions): WebhookThread {
  const { onEvent, ...data } = options;
  const thread = messagedWorker<ToLoopThread, FromWebhookThread>(
    import.meta.url,
    'webhook-worker',
    data,
    (message) => onEvent(message.event),
    (error) => onEvent({ webhookId: '-', outcome: 'error', message: error.message }),
  );
  return { wake: () => thread.post({ type: 'wake' }), stop: () => thread.stop({ type: 'stop' }) };
}
