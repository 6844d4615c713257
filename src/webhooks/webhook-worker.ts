// The entry of a server's webhook thread (src/webhooks/webhook-thread.ts): its own storage of the database and a
// dispatcher, woken by the server's scans and polling for the other processes' writes.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { runLoopThread } from '../lib/thread.js';
import { openStorage } from '../storage/index.js';
import { startDispatcher, type WebhookEvent } from './dispatcher.js';
import type { FromWebhookThread, WebhookThreadOptions } from './webhook-thread.js';

const port = parentPort;
if (port === null) throw new Error('webhook-worker.ts runs as a worker thread');
const { databaseUrl, killAt, ...settings } = workerData as Omit<WebhookThreadOptions, 'onEvent'>;

const log = (event: WebhookEvent) => port.postMessage({ type: 'event', event } satisfies FromWebhookThread);

await runLoopThread(port, {
  // The scan thread checkpoints the server's SQLite file (docs/DESIGN.md §118).
  open: () => openStorage(databaseUrl, { checkpointAtCommit: false }),
  close: (storage) => storage.close(),
  onOpenError: (message) => log({ webhookId: '-', outcome: 'error', message }),
  start: (storage) =>
    startDispatcher(storage, {
      // Unique per start: a restarted process never takes its previous life's claims for its own.
      owner: `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`,
      ...settings,
      onPhase:
        killAt === undefined ? undefined : (phase) => void (phase === killAt && process.kill(process.pid, 'SIGKILL')),
      log,
    }),
});
