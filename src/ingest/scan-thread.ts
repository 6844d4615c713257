// A server's scan runner on a thread of its own (pipeline.md §2): reading, checking and preparing a report is CPU
// work that must not hold the thread answering requests. The thread opens the database itself, as its owner (the
// writes of an ingest are not the API role's), claims scans and applies them; this side wakes it when an upload was
// queued here and stops it with the server.
import { messagedWorker, type ToLoopThread } from '../lib/thread.js';
import type { ScanEvent } from './scan-runner.js';

export interface ScanThreadOptions {
  databaseUrl: string;
  leaseMs: number;
  pollMs: number;
  /** Ended scans older than this are deleted, every `pruneEveryMs` and once at start. */
  retentionMs: number;
  /** Changes older than this are deleted from the change log, on the same schedule. */
  changesRetentionMs: number;
  pruneEveryMs: number;
  /** How often the dismissals and exemptions that expired are done (Storage.expireDue), and once at start. */
  expiryEveryMs: number;
  /** Tests only: the point of a scan at which the thread kills the process (SECINV_TEST_SCAN_KILL_AT). */
  killAt?: string | undefined;
  /** What happened to each scan (never a key or a body), for the server's log. */
  onEvent: (event: ScanEvent) => void;
}

/** Messages from the thread: an event, or that it stopped after `stop`. */
export type FromScanThread = { type: 'event'; event: ScanEvent } | { type: 'stopped' };

export interface ScanThread {
  wake(): void;
  stop(): Promise<void>;
}

export function startScanThread(options: ScanThreadOptions): ScanThread {
  const { onEvent, ...data } = options;
  const thread = messagedWorker<ToLoopThread, FromScanThread>(
    import.meta.url,
    'scan-worker',
    data,
    (message) => {
      if (message.type === 'event') onEvent(message.event);
    },
    (error) => onEvent({ scanId: '-', tenantId: '-', status: 'error', message: error.message }),
  );
  return { wake: () => thread.post({ type: 'wake' }), stop: () => thread.stop({ type: 'stop' }) };
}
