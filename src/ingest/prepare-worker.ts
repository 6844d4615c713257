// The entry of an ingest's preparing thread (src/ingest/prepare-thread.ts): turns batches of a scan's findings, as
// JSON texts, into the records the writer stores, each with its document already made, and posts them back.
import { parentPort, workerData } from 'node:worker_threads';
import { UserError } from '../domain/errors.js';
import { preparedFinding, type VulnerabilityRecord } from '../domain/records.js';
import { findingRecord } from './finding-record.js';
import type { FromPreparer, ScanSetup, ToPreparer } from './prepare-thread.js';
import { withLateTarget, type ScanFinding } from './scan.js';

const port = parentPort;
if (port === null) throw new Error('prepare-worker.ts runs as a worker thread');

const { context, target } = workerData as ScanSetup;
port.on('message', (message: ToPreparer) => {
  const records: VulnerabilityRecord[] = [];
  // The documents move to the writing thread without a copy.
  const transfer: ArrayBuffer[] = [];
  try {
    for (const [i, text] of message.texts.entries()) {
      const finding = withLateTarget(JSON.parse(text) as ScanFinding, target);
      const record = preparedFinding(findingRecord(finding, context, message.firstObserved[i] ?? undefined));
      records.push(record);
      transfer.push(record.document?.buffer as ArrayBuffer);
    }
  } catch (error) {
    if (!(error instanceof UserError)) throw error;
    port.postMessage({ type: 'problem', message: error.message } satisfies FromPreparer);
    return;
  }
  port.postMessage({ type: 'prepared', records } satisfies FromPreparer, transfer);
});
