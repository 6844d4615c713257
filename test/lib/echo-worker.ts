// A worker for test/lib/thread.test.ts: answers each message with the message and the file it runs from.
import { parentPort } from 'node:worker_threads';

parentPort?.on('message', (message: unknown) => parentPort?.postMessage({ message, from: import.meta.url }));
