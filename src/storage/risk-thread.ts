// Where a derivation runs the rules (src/storage/risk-compute.ts): on the deriving thread for a few assets, on a worker
// thread for many, so that parsing the cited findings, running the rules and serialising the risks of one batch
// overlap the reads and writes of the batches around it (docs/DESIGN.md §59). The thread answers batches in the order
// they were sent.
import { computeRisks, type RiskBatch, type RiskWrites } from './risk-compute.js';
import { startWorker } from './thread.js';

export interface RiskComputer {
  compute(batch: RiskBatch): Promise<RiskWrites>;
  close(): Promise<void>;
}

/** The rules on the calling thread. */
export const inlineComputer: RiskComputer = {
  compute: (batch) => Promise.resolve(computeRisks(batch)),
  close: () => Promise.resolve(),
};

export type FromRiskThread = { writes: RiskWrites } | { error: string };

/** The rules on a thread of their own, until `close`. */
export function threadComputer(): RiskComputer {
  const thread = startWorker(import.meta.url, 'risk-worker');
  const waiting: { resolve: (w: RiskWrites) => void; reject: (e: Error) => void }[] = [];
  let stopped: Error | null = null;
  const fail = (error: Error) => {
    stopped ??= error;
    for (const { reject } of waiting.splice(0)) reject(error);
  };
  thread.on('message', (message: FromRiskThread) => {
    const next = waiting.shift();
    if ('error' in message) next?.reject(new Error(`the risk rules failed: ${message.error}`));
    else next?.resolve(message.writes);
  });
  thread.on('error', fail);
  thread.on('exit', (code) => fail(new Error(`the risk rules' thread stopped (exit code ${code})`)));
  return {
    compute: (batch) =>
      new Promise((resolve, reject) => {
        if (stopped) return reject(stopped);
        waiting.push({ resolve, reject });
        thread.postMessage(batch);
      }),
    close: async () => {
      stopped ??= new Error("the risk rules' thread was closed");
      await thread.terminate();
    },
  };
}
