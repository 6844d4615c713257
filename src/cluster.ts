// `secinv serve --workers N` (docs/DESIGN.md §112): N serving processes on one port, forked with node:cluster. The
// primary answers no request: it forks them (cluster hands each connection it accepts to the next in turn), does the
// background work once (the scan and webhook threads of src/server.ts, which a serving process wakes when it queues a
// scan), serves the metrics of them all summed, passes signals on and starts another process where one dies. Each
// serving process is the server of src/server.ts, with its share of the budgets of the memory it keeps.
import cluster, { type Worker } from 'node:cluster';
import { pino } from 'pino';
import { AggregatorRegistry } from 'prom-client';
import type { Config } from './config.js';
import { UserError } from './domain/errors.js';
import { createMetrics } from './http/metrics.js';
import { serveMetrics, startBackground, startServer, type RunningServer } from './server.js';
import type { Storage } from './storage/index.js';

/** What a serving process tells the primary. */
type FromServing =
  | { type: 'secinv:listening'; url: string }
  | { type: 'secinv:failed'; message: string }
  | { type: 'secinv:scan-queued' }
  | { type: 'secinv:metrics'; id: number };

/** What the primary tells a serving process: a signal's two steps, and the metrics it asked for. */
type ToServing =
  | { type: 'secinv:drain' }
  | { type: 'secinv:close' }
  | { type: 'secinv:metrics'; id: number; text?: string; error?: string };

/** More unexpected exits than this within the window, and the primary stops: the processes are in a crash loop. */
const RESTARTS_MAX = 5;
const RESTARTS_WINDOW_MS = 60_000;

/** Whether this process is a serving process that a primary forked. */
export const isServingProcess = (): boolean => cluster.isWorker;

/**
 * A serving process's share of what the settings bound for the whole `serve`: each keeps bodies and count columns of
 * its own, so each gets its part of the two budgets. The metrics port is the primary's.
 */
export const servingShare = (config: Readonly<Config>): Readonly<Config> =>
  Object.freeze({
    ...config,
    keptBodiesMb: config.keptBodiesMb / config.workers,
    countColumnsMaxRows: Math.floor(config.countColumnsMaxRows / config.workers),
    metricsPort: undefined,
  });

/**
 * A serving process: opens its storage and serves, its scans woken and its metrics summed by the primary. A failure to
 * start goes to the primary as one line (`describe`), so that N processes failing alike print it once.
 */
export async function runServing(
  config: Readonly<Config>,
  open: (share: Readonly<Config>) => Promise<Storage>,
  describe: (error: unknown) => string,
): Promise<void> {
  const send = (message: FromServing) => process.send?.(message);
  const asked = new Map<number, { resolve: (text: string) => void; reject: (error: Error) => void }>();
  let next = 0;
  // The primary's word may come while this process still starts (it was started again as a signal came).
  let server: RunningServer | undefined;
  let wanted: 'drain' | 'close' | undefined;
  const follow = () => {
    if (wanted === 'close') void server?.close();
    else if (wanted === 'drain') server?.drain();
  };
  // The channel carries prom-client's messages too: they are not among these cases.
  process.on('message', (message: ToServing) => {
    switch (message.type) {
      case 'secinv:metrics': {
        const waiting = asked.get(message.id);
        asked.delete(message.id);
        if (message.text !== undefined) waiting?.resolve(message.text);
        else waiting?.reject(new Error(message.error ?? 'no metrics'));
        return;
      }
      case 'secinv:drain':
        wanted ??= 'drain';
        return follow();
      case 'secinv:close':
        wanted = 'close';
        return follow();
    }
  });
  const share = servingShare(config);
  let storage: Storage | undefined;
  try {
    storage = await open(share);
    const metrics = createMetrics(storage);
    // prom-client answers the primary's requests for this process's metrics once an AggregatorRegistry exists here.
    AggregatorRegistry.setRegistries(metrics.registry);
    new AggregatorRegistry();
    const summed = () =>
      new Promise<string>((resolve, reject) => {
        const id = next++;
        asked.set(id, { resolve, reject });
        send({ type: 'secinv:metrics', id });
      });
    server = await startServer(share, storage, {
      background: { scanQueued: () => send({ type: 'secinv:scan-queued' }), stop: async () => undefined },
      metrics: { ...metrics, text: summed },
    });
  } catch (error) {
    await storage?.close();
    process.send?.({ type: 'secinv:failed', message: describe(error) } satisfies FromServing, () => process.exit(1));
    return;
  }
  send({ type: 'secinv:listening', url: server.url });
  follow();
  await server.closed;
  // The channel to the primary is all that is left open: without it the process ends once its output is written.
  cluster.worker?.disconnect();
}

export interface Primary {
  url: string;
  metricsUrl: string | undefined;
  /** Resolves once a signal has stopped every serving process and the background work; rejects on a crash loop. */
  closed: Promise<void>;
}

/** Forks the serving processes and resolves once every one listens; a failure of any to start is a UserError. */
export async function startPrimary(config: Readonly<Config>): Promise<Primary> {
  const log = pino({ level: config.logLevel });
  const background = startBackground(config, (event, what) => log.info(event, what));
  const aggregator = new AggregatorRegistry();
  const serving = new Set<Worker>();
  const exits: number[] = [];
  let up = false;
  let listening = 0;
  let stopping = false;
  let failure: Error | undefined;
  let started!: (url: string) => void;
  let failedToStart!: (error: Error) => void;
  const startup = new Promise<string>((resolve, reject) => {
    started = resolve;
    failedToStart = reject;
  });
  let ended!: () => void;
  const allEnded = new Promise<void>((resolve) => (ended = resolve));

  const tell = (worker: Worker, message: ToServing) => {
    if (worker.isConnected()) worker.send(message);
  };
  const stop = (how: 'drain' | 'close') => {
    stopping = true;
    for (const worker of serving) tell(worker, { type: how === 'drain' ? 'secinv:drain' : 'secinv:close' });
    if (serving.size === 0) ended();
  };
  // The channel carries prom-client's messages too: they are not among these cases.
  const onMessage = (worker: Worker, message: FromServing) => {
    const pid = worker.process.pid;
    switch (message.type) {
      case 'secinv:scan-queued':
        return background.scanQueued();
      case 'secinv:metrics':
        return void aggregator.clusterMetrics().then(
          (text) => tell(worker, { type: 'secinv:metrics', id: message.id, text }),
          (error: Error) => tell(worker, { type: 'secinv:metrics', id: message.id, error: error.message }),
        );
      case 'secinv:failed':
        if (up) return log.error({ servingPid: pid, reason: message.message }, 'a serving process failed to start');
        return failedToStart(new UserError(message.message));
      case 'secinv:listening':
        if (up) return log.info({ servingPid: pid }, 'serving process started again');
        if (++listening === config.workers) {
          up = true;
          started(message.url);
        }
    }
  };
  const onExit = (worker: Worker, code: number | null, signal: string | null) => {
    serving.delete(worker);
    if (stopping) {
      if (serving.size === 0) ended();
      return;
    }
    const pid = worker.process.pid;
    if (!up)
      return failedToStart(new UserError(`a serving process (pid ${pid}) ended as it started (${signal ?? code})`));
    const now = Date.now();
    exits.push(now);
    while (exits[0]! < now - RESTARTS_WINDOW_MS) exits.shift();
    if (exits.length > RESTARTS_MAX) {
      failure = new UserError(
        `serving processes ended ${exits.length} times within ${RESTARTS_WINDOW_MS / 1000} s (the last, pid ${pid}: ` +
          `${signal ?? `exit code ${code}`}): stopping`,
      );
      log.error({ servingPid: pid, code, signal }, 'serving processes keep ending; stopping');
      return stop('close');
    }
    log.warn({ servingPid: pid, code, signal }, 'serving process ended; starting another');
    fork();
  };
  const fork = () => {
    const worker = cluster.fork();
    serving.add(worker);
    worker.on('message', (message: FromServing) => onMessage(worker, message));
    worker.on('exit', (code, signal) => onExit(worker, code, signal));
    // A message sent as the process ended: its exit says the rest.
    worker.on('error', (error) => log.warn({ servingPid: worker.process.pid, err: error }, 'serving process channel'));
  };
  for (let i = 0; i < config.workers; i += 1) fork();

  // Ends what started and says why: every process killed (none has been named as serving yet), the threads stopped.
  const abandon = async (error: unknown): Promise<never> => {
    stopping = true;
    for (const worker of serving) worker.process.kill('SIGKILL');
    if (serving.size === 0) ended();
    await allEnded;
    await background.stop();
    throw error;
  };
  const url = await startup.catch(abandon);
  const metricsServer =
    config.metricsPort === undefined
      ? undefined
      : await serveMetrics(config.host, config.metricsPort, {
          text: () => aggregator.clusterMetrics(),
          contentType: aggregator.contentType,
        }).catch(abandon);

  // As one server: the first signal drains every process (each unready, still serving for the grace period, then
  // closed); a second closes them at once. They may have had the signal too (a terminal's Ctrl+C reaches the group):
  // a drain is done once, whoever asks.
  let signalled = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (signalled) return stop('close');
    signalled = true;
    log.info({ signal, graceMs: config.shutdownGraceMs }, 'shutting down');
    stop('drain');
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const closed = allEnded.then(async () => {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await metricsServer?.close();
    // A scan being applied finishes first, as in one server (src/server.ts).
    await background.stop();
    if (failure) throw failure;
  });
  return { url, metricsUrl: metricsServer?.url, closed };
}
