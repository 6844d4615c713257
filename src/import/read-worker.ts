// The entry of the import's reading thread (src/import/read-thread.ts): reads the files it is given, and posts their
// records in batches, never more than WINDOW batches ahead of the writes.
import { createReadStream } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { preparedFinding, type WholeFinding } from '../domain/records.js';
import { readSources, type ReadItem } from './reader.js';
import type { ToReader, FromReader } from './read-thread.js';

const port = parentPort;
if (port === null) throw new Error('read-worker.ts runs as a worker thread');
const { files, batchItems, window } = workerData as {
  files: { name: string; path: string }[];
  batchItems: number;
  window: number;
};

/** Bytes per read: the chunks wait in this thread's heap until their lines are parsed (1 MiB took ~30 MB more RSS). */
const READ_CHUNK = 256 << 10;

const organizations = new Map<string, (organizationId: string | undefined) => void>();
const credits: (() => void)[] = [];
let unacknowledged = 0;
port.on('message', (message: ToReader) => {
  if (message.type === 'ack') {
    unacknowledged -= 1;
    credits.shift()?.();
  } else {
    organizations.get(message.tenantId)?.(message.organizationId ?? undefined);
    organizations.delete(message.tenantId);
  }
});
const post = (message: FromReader) => port.postMessage(message);

let batch: ReadItem[] = [];
// The findings' documents move to the writing thread without a copy.
let transfer: ArrayBuffer[] = [];
let bytes = 0;
const flush = async () => {
  port.postMessage({ type: 'items', items: batch, bytes } satisfies FromReader, transfer);
  batch = [];
  transfer = [];
  bytes = 0;
  unacknowledged += 1;
  // Back-pressure: the records read wait in this thread's memory, a bounded number of batches of them.
  if (unacknowledged >= window) await new Promise<void>((resolve) => credits.push(resolve));
};

await readSources(
  files.map(({ name, path }, index) => ({
    name,
    open: () => {
      post({ type: 'source', index });
      const stream = createReadStream(path, { highWaterMark: READ_CHUNK });
      stream.on('data', (chunk) => (bytes += chunk.length));
      return stream;
    },
  })),
  (tenantId) =>
    new Promise((resolve) => {
      organizations.set(tenantId, resolve);
      post({ type: 'organization', tenantId });
    }),
  async (item) => {
    if ('kind' in item && item.kind === 'vulnerability') {
      // The reader makes whole findings; only this thread prepares them.
      const value = preparedFinding(item.value as WholeFinding);
      transfer.push(value.document?.buffer as ArrayBuffer);
      batch.push({ ...item, value });
    } else batch.push(item);
    if (batch.length >= batchItems) await flush();
  },
);
await flush();
post({ type: 'done' });
