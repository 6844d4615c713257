// A large import reads on two cores: a worker thread parses and validates the files (src/import/read-worker.ts) while
// this thread writes what it has read. Both halves cost about as much (docs/DESIGN.md §48), and better-sqlite3 writes
// on the calling thread, so one thread alone leaves a core idle.
import { startWorker } from '../lib/thread.js';
import type { ReadItem } from './reader.js';

export type ToReader = { type: 'ack' } | { type: 'organization'; tenantId: string; organizationId: string | null };
export type FromReader =
  | { type: 'source'; index: number }
  | { type: 'items'; items: ReadItem[]; bytes: number }
  | { type: 'organization'; tenantId: string }
  | { type: 'done' };

export interface ThreadFile {
  name: string;
  path: string;
  /** Called when the thread opens the file, then with the bytes it has read since the last call. */
  started?: () => void;
  read?: (bytes: number) => void;
}

/** Records per message: a message costs ~0.1 ms to post and receive, a record ~50 µs to read. */
const BATCH_ITEMS = 1000;
/** Batches read ahead of the writes: enough to keep both threads busy, few enough to bound the memory they take. */
const WINDOW = 4;

/** Reads the files in a worker thread and hands each record to `sink` here, in order, as readSources would. */
export async function readInThread(
  files: readonly ThreadFile[],
  organizationOf: (tenantId: string) => Promise<string | undefined>,
  sink: (item: ReadItem) => Promise<void>,
): Promise<void> {
  const worker = startWorker(import.meta.url, 'read-worker', {
    workerData: { files: files.map(({ name, path }) => ({ name, path })), batchItems: BATCH_ITEMS, window: WINDOW },
  });
  let current: ThreadFile | undefined;
  try {
    await new Promise<void>((resolve, reject) => {
      // Batches are written one after the other; a question about a tenant is answered at once.
      let writes = Promise.resolve();
      // Set when the thread's last message arrives, before the writes reach it: the thread may exit in between.
      let read = false;
      const send = (message: ToReader) => worker.postMessage(message);
      worker.on('message', (message: FromReader) => {
        if (message.type === 'organization') {
          organizationOf(message.tenantId).then(
            (organizationId) =>
              send({ type: 'organization', tenantId: message.tenantId, organizationId: organizationId ?? null }),
            reject,
          );
          return;
        }
        if (message.type === 'done') read = true;
        writes = writes.then(async () => {
          if (message.type === 'source') {
            current = files[message.index];
            current?.started?.();
          } else if (message.type === 'items') {
            for (const item of message.items) await sink(item);
            if (message.bytes > 0) current?.read?.(message.bytes);
            send({ type: 'ack' });
          } else resolve();
        });
        writes.catch(reject);
      });
      worker.on('error', reject);
      worker.on('exit', (code) => {
        if (!read) reject(new Error(`the import's reading thread stopped (exit code ${code})`));
      });
    });
  } finally {
    await worker.terminate();
  }
}
