// The entry of a server's webhook thread (src/webhooks/webhook-thread.ts): its own storage of the database and a
// dispatcher, woken by the server's scans and polling for the other processes' writes.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { openStorage } from '../storage/index.js';
import { startDispatcher } from './dispatcher.js';
import type { FromWebhookThread, ToWebhookThread, WebhookThreadOptions } from './webhook-thread.js';

const port = parentPort;
if (port === null) throw new Error('webhook-worker.ts runs as a worker thread');
const { databaseUrl, killAt, ...settings } = workerData as Omit<WebhookThreadOptions, 'onEvent'>;

const storage = await openStorage(databaseUrl);
const dispatcher = startDispatcher(storage, {
  // Unique per start: a restarted process never takes its previous life's claims for its own.
  owner: `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`,
  ...settings,
  onPhase:
    killAt === undefined ? undefined : (phase) => void (phase === killAt && process.kill(process.pid, 'SIGKILL')),
  log: (event) => port.postMessage({ type: 'event', event } satisfies FromWebhookThread),
});
port.on('message', (message: ToWebhookThread) => {
  if (message.type === 'stop')
    void dispatcher
      .stop()
      .then(() => storage.close())
      .finally(() => process.exit(0));
  else dispatcher.wake();
});
