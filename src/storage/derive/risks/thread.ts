// Where a derivation runs the rules (src/storage/derive/risks/compute.ts): on the deriving thread for a few assets, on a worker
// thread for many, so that parsing the cited findings, running the rules and serialising the risks of one batch
// overlap the reads and writes of the batches around it (docs/DESIGN.md §59). The thread answers batches in the order
// they were sent.
import { computeRisks, type RiskBatch, type RiskWrites } from './compute.js';
import { orderedWorker } from '../../../lib/thread.js';

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
  const thread = orderedWorker<RiskBatch, FromRiskThread>(import.meta.url, 'risk-worker', "the risk rules' thread");
  return {
    compute: async (batch) => {
      const reply = await thread.request(batch);
      if ('error' in reply) throw new Error(`the risk rules failed: ${reply.error}`);
      return reply.writes;
    },
    close: () => thread.close(),
  };
}
