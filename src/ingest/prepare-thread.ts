// The write side of a large report on two cores: a worker thread (src/ingest/prepare-worker.ts) parses, validates and
// serialises the findings read back from the scratch file while this thread writes the ones it has, as the import's
// reading thread does for NDJSON (docs/DESIGN.md §51). A report whose findings all fit in memory never starts it.
import { UserError } from '../domain/errors.js';
import type { VulnerabilityRecord } from '../domain/records.js';
import { orderedWorker } from '../lib/thread.js';
import type { FindingContext } from './finding-record.js';
import type { LateTarget } from './scan.js';

/** What the thread needs of a scan before its findings (its `workerData`): the context and the late target. */
export interface ScanSetup {
  context: FindingContext;
  target: LateTarget | null;
}

/** Findings as JSON texts, each with the firstObservedAt of the asset's stored finding of its id, if any. */
export interface ToPreparer {
  texts: string[];
  firstObserved: (string | null)[];
}
/** The thread answers each batch in the order it was sent. */
export type FromPreparer = { type: 'prepared'; records: VulnerabilityRecord[] } | { type: 'problem'; message: string };

/** Findings per message: a message costs ~0.1 ms to post and receive, a finding ~15 µs to prepare. */
const BATCH = 1000;
/** Batches prepared ahead of the writes: both threads stay busy, and only so many records wait in memory. */
const WINDOW = 4;
const YOUNG_GENERATION_MB = 8;

/**
 * The records of a scan's findings (each its id and the JSON text of its ScanFinding), in their order, a batch at a
 * time, prepared on a thread of their own; `firstObserved` gives when the asset's stored finding of an id was first
 * seen. The thread lives as long as the scan's findings: the rest of the run (derived fields, risks, index builds) does
 * not carry its memory.
 */
export async function* preparedInThread(
  entries: Iterable<[id: string, text: string]>,
  scan: ScanSetup,
  firstObserved: (id: string) => string | undefined,
): AsyncGenerator<VulnerabilityRecord[]> {
  // A small young generation: what the thread makes dies within its batch. For a 200,000-finding ingest, 16 MB peaked
  // at 239–242 MB RSS, 8 MB at 226–239 MB, 4 MB at 215–226 MB but spent more in collections (docs/BENCHMARKS.md).
  const thread = orderedWorker<ToPreparer, FromPreparer>(
    import.meta.url,
    'prepare-worker',
    "the ingest's preparing thread",
    { workerData: scan, resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB } },
  );
  const source = entries[Symbol.iterator]();
  try {
    const inFlight: Promise<FromPreparer>[] = [];
    const send = (): void => {
      // The stored times go with each batch, not as one map of every id up front: a re-scan of 200,000 findings
      // copied that map to the thread and held it there, 90 MB more at the peak.
      const batch: string[] = [];
      const times: (string | null)[] = [];
      while (batch.length < BATCH) {
        const next = source.next();
        if (next.done === true) break;
        const [id, text] = next.value;
        batch.push(text);
        times.push(firstObserved(id) ?? null);
      }
      if (batch.length === 0) return;
      const reply = thread.request({ texts: batch, firstObserved: times });
      // A reply the writes no longer wait for (they failed first) must not fail the process when its thread does.
      reply.catch(() => undefined);
      inFlight.push(reply);
    };
    for (let i = 0; i < WINDOW; i += 1) send();
    for (let reply = inFlight.shift(); reply !== undefined; reply = inFlight.shift()) {
      const message = await reply;
      send();
      if (message.type === 'problem') throw new UserError(message.message);
      yield message.records;
    }
  } finally {
    // A scan that fails part-way leaves texts unread: their scratch statement must end before the scratch closes.
    source.return?.();
    await thread.close();
  }
}
