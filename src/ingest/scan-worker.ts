// The entry of a server's scan thread (src/ingest/scan-thread.ts): its own storage of the database, a runner that
// claims and applies scans, woken by the server's uploads and polling for the other processes' ones.
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { parentPort, workerData } from 'node:worker_threads';
import { runLoopThread } from '../lib/thread.js';
import { openStorage } from '../storage/index.js';
import { scanRunner, type ScanEvent } from './scan-runner.js';
import type { FromScanThread, ScanThreadOptions } from './scan-thread.js';

const port = parentPort;
if (port === null) throw new Error('scan-worker.ts runs as a worker thread');
const { databaseUrl, leaseMs, pollMs, retentionMs, changesRetentionMs, pruneEveryMs, expiryEveryMs, killAt } =
  workerData as Omit<ScanThreadOptions, 'onEvent'>;

const kill = () => process.kill(process.pid, 'SIGKILL');
const log = (event: ScanEvent) => port.postMessage({ type: 'event', event } satisfies FromScanThread);

await runLoopThread(port, {
  // This thread checkpoints the server's SQLite file, once idle (docs/DESIGN.md §118).
  open: () => openStorage(databaseUrl, { checkpointAtCommit: false }),
  close: (storage) => storage.close(),
  onOpenError: (message) => log({ scanId: '-', tenantId: '-', status: 'error', message }),
  start: (storage) => {
    const runner = scanRunner(storage, {
      // Unique per start: a restarted process never takes its previous life's claims for its own.
      owner: `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`,
      leaseMs,
      pollMs,
      retention: { scansMs: retentionMs, changesMs: changesRetentionMs, everyMs: pruneEveryMs },
      expiryEveryMs,
      onPhase: killAt === undefined ? undefined : (phase) => void (phase === killAt && kill()),
      log,
    });
    // Scans queued before this start (by an earlier life of this process, or by others) are looked for at once; at
    // `queued` none is, so that the upload stays unclaimed.
    if (killAt !== 'queued') runner.wake();
    return runner;
  },
  // At `queued` the first upload answered here kills the process before anything claims it.
  onWake: (runner) => (killAt === 'queued' ? kill() : runner?.wake()),
});
