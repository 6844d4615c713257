// Applying queued scans (pipeline.md §2, docs/DESIGN.md §98): claim the next scan that may run, ingest its bytes as
// `secinv ingest` would read the file, and end it. Its success is written in the ingest's own transaction; a report
// that is refused ends `failed` with the problems the command would print; a process that dies mid-scan leaves its
// claim to expire, and the scan to whichever process claims it next. Between scans its loop does the server's chores:
// the bodies a dead process left, the expiries that are due (Storage.expireDue), retention.
import { Readable } from 'node:stream';
import { UserError } from '../domain/errors.js';
import type { Provider } from '../domain/enums.js';
import type { ScanProblem } from '../domain/scans.js';
import type { IngestFormat } from '../input/formats.js';
import { ScanClaimLost, type ClaimedScan, type StaleStatistics, type Storage } from '../storage/index.js';
import { ingestFiles } from './ingest.js';
import { scanProblem } from './scan-record.js';

/** How often a runner looks for bytes left behind by a process that died. */
const SWEEP_MS = 60 * 60 * 1000;
/**
 * How long the upkeep after a scan (the statistics it left stale, the checkpoint of its pages) waits for the scans
 * queued behind it, at most (docs/DESIGN.md §113, §118).
 */
const UPKEEP_WAIT_MS = 60_000;

export interface ScanRunnerOptions {
  /** Who claims: unique per process and start, so a restarted process does not mistake an old claim for its own. */
  owner: string;
  leaseMs: number;
  /** How often to look for scans queued by other processes when nothing wakes it. */
  pollMs: number;
  /**
   * Delete the scans that ended more than `scansMs` ago and the changes committed more than `changesMs` ago, every
   * `everyMs` of the loop (the first time at once).
   */
  retention?: { scansMs: number; changesMs: number; everyMs: number } | undefined;
  /** Reopen the dismissals and lift the exemptions that expired, every this many ms (the first time at once). */
  expiryEveryMs?: number | undefined;
  now?: () => Date;
  /** Called at each point of applying a scan (`claimed`, then the write's), for fault tests. */
  onPhase?: ((phase: string) => void) | undefined;
  /** Where to say what happened to each scan, never a key or a body. */
  log?: (event: ScanEvent) => void;
}

/** What happened to a scan, for the server's log (never a key or a body). */
export interface ScanEvent {
  scanId: string;
  tenantId: string;
  status: string;
  message?: string;
}

export interface ScanRunner {
  /** A scan was queued here: look now. */
  wake(): void;
  /** Applies every scan that may run now, one after another, then the upkeep: statistics, checkpoint. */
  drain(): Promise<void>;
  /** Stops after the scan being applied, if any. */
  stop(): Promise<void>;
}

const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/** Applies one claimed scan; false when it could not be ended here (its claim was lost). */
export async function applyClaimedScan(
  storage: Storage,
  claim: ClaimedScan,
  now: () => Date,
  onPhase?: (phase: string) => void,
  staleStatistics?: StaleStatistics,
): Promise<string> {
  if (claim.interrupted) return 'failed';
  const options = claim.options;
  const source = { name: claim.name ?? 'upload', open: () => Readable.from(storage.scanBody(claim)) };
  const fail = async (problems: ScanProblem[]) =>
    (await storage.failScan(claim, problems, now().toISOString())) ? 'failed' : 'lost';
  try {
    const result = await ingestFiles(storage, [source], {
      tenantId: claim.tenantId,
      format: (text(options.format) ?? 'auto') as IngestFormat | 'auto',
      provider: text(options.provider) as Provider | undefined,
      region: text(options.region),
      assetId: text(options.assetId),
      cluster: text(options.cluster),
      integrationId: text(options.integrationId),
      resolve: options.resolve !== false,
      dryRun: false,
      now,
      scan: claim,
      onPhase,
      staleStatistics,
    });
    if (result.problems.length > 0) return await fail(result.problems.map((p) => scanProblem(p)));
    storage.scanApplied(claim);
    return 'succeeded';
  } catch (error) {
    if (error instanceof ScanClaimLost) return 'lost';
    if (error instanceof UserError) return await fail([{ message: error.message }]);
    throw error;
  }
}

export function scanRunner(storage: Storage, options: ScanRunnerOptions): ScanRunner {
  const now = options.now ?? (() => new Date());
  let stopped = false;
  let woken: (() => void) | undefined;
  /** A wake came while the loop was not waiting (its last look may have missed what woke it): look again at once. */
  let nudged = false;
  let running: Promise<void> | undefined;

  // The upkeep of the scans applied since the runner was last idle: fresh statistics of the tables they left stale,
  // then (SQLite) their pages copied from the WAL into the file. Once the runner has been idle a poll interval, not
  // after each scan, so that the scans queued behind a large one (CI jobs, often sent just as it ends) do not wait for
  // the seconds these take; a queue that never empties waits UPKEEP_WAIT_MS. A scan applied meanwhile does not count
  // the rows of the tables already waiting. Each idle poll checkpoints what the server's other connections wrote, none
  // of which checkpoints by itself (docs/DESIGN.md §113, §118, §119).
  const stale = new Set<string>();
  let appliedSince: number | undefined;
  const waitingStatistics: StaleStatistics = {
    waiting: stale,
    add: (tables) => {
      for (const table of tables) stale.add(table);
    },
  };
  const upkeep = async (): Promise<void> => {
    if (stale.size > 0) {
      const tables = [...stale];
      await storage.analyzeTables(tables);
      for (const table of tables) stale.delete(table);
      options.onPhase?.('analyzed');
    }
    await storage.checkpoint();
    appliedSince = undefined;
  };

  /** Applies the queued scans until there are none. */
  const drainQueue = async (): Promise<void> => {
    for (;;) {
      if (stopped) return;
      if (appliedSince !== undefined && now().getTime() - appliedSince >= UPKEEP_WAIT_MS) await upkeep();
      const claim = await storage.claimScan(options.owner, now(), options.leaseMs);
      if (claim === undefined) return;
      options.onPhase?.('claimed');
      try {
        const status = await applyClaimedScan(storage, claim, now, options.onPhase, waitingStatistics);
        appliedSince ??= now().getTime();
        options.log?.({ scanId: claim.scanId, tenantId: claim.tenantId, status });
      } catch (error) {
        // Not the report's fault (the database went away, say): the claim expires and the scan is tried again.
        options.log?.({
          scanId: claim.scanId,
          tenantId: claim.tenantId,
          status: 'retry',
          message: (error as Error).message,
        });
        return;
      }
    }
  };

  const logError = (error: unknown) =>
    options.log?.({ scanId: '-', tenantId: '-', status: 'error', message: (error as Error).message });

  /** A chore of the loop, due at once and then every `everyMs` by the runner's clock. */
  const every = (everyMs: number) => {
    let last: number | undefined;
    return (): boolean => {
      const at = now().getTime();
      if (last !== undefined && at - last < everyMs) return false;
      last = at;
      return true;
    };
  };
  const sweepDue = every(SWEEP_MS);
  const pruneDue = options.retention === undefined ? () => false : every(options.retention.everyMs);
  /** Deletes the ended scans and the changes past their retention, when due; after the queue is drained. */
  const prune = async (): Promise<void> => {
    const { retention } = options;
    if (retention === undefined || !pruneDue()) return;
    const cutoff = (ms: number) => new Date(now().getTime() - ms).toISOString();
    // A server stopping does not wait for a long backlog: the rest is deleted at its next start.
    const until = { stopped: () => stopped };
    const pruned = (count: number, what: string) => {
      if (count > 0)
        options.log?.({ scanId: '-', tenantId: '-', status: 'pruned', message: `${count} ${what} deleted` });
    };
    pruned(await storage.pruneScans(cutoff(retention.scansMs), until), 'ended scans');
    pruned(await storage.pruneChanges(cutoff(retention.changesMs), until), 'changes');
  };

  const expiryDue = options.expiryEveryMs === undefined ? () => false : every(options.expiryEveryMs);
  /** The expiries that are due (pipeline.md §6), when their interval has passed; after the queue is drained. */
  const expire = async (): Promise<void> => {
    if (!expiryDue()) return;
    const run = await storage.expireDue(now());
    if (run.tenants > 0)
      options.log?.({
        scanId: '-',
        tenantId: '-',
        status: 'expired',
        message: `${run.reopened} dismissals reopened, ${run.assets} assets with exemptions lifted, in ${run.tenants} tenants`,
      });
  };

  const loop = async () => {
    while (!stopped) {
      nudged = false;
      // Bytes a process that died left behind, at the start and then hourly.
      if (sweepDue()) await storage.sweepScanBodies(now()).catch(logError);
      await drainQueue().catch(logError);
      // A failed run (the database away) is tried again at its next interval, as any other chore.
      if (!stopped) await expire().catch(logError);
      // A failed prune (the database away) is tried again at the next hour, as any other.
      if (!stopped) await prune().catch(logError);
      if (stopped) return;
      if (nudged) continue;
      const idle = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(true), options.pollMs);
        woken = () => {
          clearTimeout(timer);
          resolve(false);
        };
      });
      woken = undefined;
      // A failed upkeep (the database away) is tried again at the next idle interval.
      if (idle && !stopped) await upkeep().catch(logError);
    }
  };

  return {
    wake: () => {
      nudged = true;
      if (running === undefined) running = loop();
      woken?.();
    },
    drain: async () => {
      await drainQueue();
      await upkeep();
    },
    stop: async () => {
      stopped = true;
      woken?.();
      await running;
    },
  };
}
