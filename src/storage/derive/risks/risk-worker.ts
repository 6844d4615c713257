// The risk rules' thread (src/storage/derive/risks/thread.ts): each message is a batch of assets, each reply its writes.
import { parentPort } from 'node:worker_threads';
import { computeRisks, type RiskBatch } from './compute.js';
import type { FromRiskThread } from './thread.js';

const port = parentPort;
if (port === null) throw new Error('risk-worker runs as a worker thread');
port.on('message', (batch: RiskBatch) => {
  let reply: FromRiskThread;
  try {
    reply = { writes: computeRisks(batch) };
  } catch (error) {
    reply = { error: error instanceof Error ? (error.stack ?? error.message) : String(error) };
  }
  port.postMessage(reply);
});
