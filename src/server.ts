// Listens: builds the app around an open storage, serves until SIGINT/SIGTERM, then shuts down gracefully.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { buildApp, defaultHttpOptions } from './app.js';
import type { Config } from './config.js';
import { fileErrorReason, UserError } from './domain/errors.js';
import { createMetrics, type Metrics } from './http/metrics.js';
import { startScanThread } from './ingest/scan-thread.js';
import { FIRST_RETRY_MS } from './domain/webhooks.js';
import { startWebhookThread } from './webhooks/webhook-thread.js';
import type { Storage } from './storage/index.js';

export interface RunningServer {
  app: FastifyInstance;
  url: string;
  /** Where Prometheus metrics are served without authentication, when --metrics-port is set. */
  metricsUrl: string | undefined;
  /** Resolves once the server has stopped (after a signal or close()). */
  closed: Promise<void>;
  /** What a first signal does: unready at once, still serving for the grace period, then closed. Once only. */
  drain(): void;
  close(): Promise<void>;
}

/** The work a `serve` does once, whichever process answers its requests: scans, expiries and webhooks. */
export interface Background {
  /** An upload was queued: the scan thread looks for it now rather than at its next poll. */
  scanQueued(): void;
  stop(): Promise<void>;
}

/** What startServer is given instead of making it itself: by a serving process of several (src/cluster.ts). */
export interface ServerParts {
  /** Work done elsewhere (in the primary process); without it the server starts its own threads. */
  background?: Background;
  metrics?: Metrics;
}

const readPem = (path: string, what: string): Buffer => {
  try {
    return readFileSync(path);
  } catch (error) {
    throw new UserError(`cannot read the TLS ${what} ${path}: ${fileErrorReason(error)}`);
  }
};

/** How often a server looks for scans that other processes of its database queued. */
const SCAN_POLL_MS = 1000;
/** How often a server deletes the scans older than SECINV_SCAN_RETENTION_DAYS (and once at start). */
const SCAN_PRUNE_MS = 60 * 60 * 1000;
const DAY_MS = 24 * 60 * 60 * 1000;
/** How often a server looks for changes that other processes of its database wrote, and webhooks to retry. */
const WEBHOOK_POLL_MS = 1000;

const hostForUrl = (host: string) => (host.includes(':') ? `[${host}]` : host);

// Why an address could not be listened on, in words, with the flag that changes it.
const LISTEN_ERRORS: Record<string, (portFlag: string) => string> = {
  EADDRINUSE: (portFlag) => `the port is in use (another secinv, or another server?): give another ${portFlag}`,
  EACCES: (portFlag) => `permission denied (ports below 1024 need privileges): give ${portFlag} 1024 or above`,
  EADDRNOTAVAIL: () => 'no network interface of this machine has this address: give another --host',
  ENOTFOUND: () => 'no such host name: give an address, or a name this machine resolves, to --host',
};

/** Listens; a failure this table knows is one line naming the address and the flag to change. */
async function listening(what: string, host: string, port: number, portFlag: string, listen: () => Promise<unknown>) {
  try {
    await listen();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? '';
    const words = LISTEN_ERRORS[code];
    if (words === undefined) throw error;
    throw new UserError(`cannot serve ${what} on ${hostForUrl(host)}:${port} (${code}): ${words(portFlag)}`);
  }
}

/** Events of the background threads, for a log: a scan's or a webhook delivery's (never a key or a body). */
export type BackgroundLog = (event: object, what: 'scan' | 'webhook') => void;

/**
 * Uploaded scans are applied by the server's process, on a thread of its own (docs/DESIGN.md §98), which also does the
 * expiries; its webhooks are sent from a thread of their own, woken by each scan applied here (docs/DESIGN.md §104).
 */
export function startBackground(config: Readonly<Config>, log: BackgroundLog): Background {
  const webhooks = startWebhookThread({
    databaseUrl: config.databaseUrl,
    pollMs: WEBHOOK_POLL_MS,
    timeoutMs: config.webhookTimeoutMs,
    // Longer than a batch's forming and its send: a claim is renewed at each batch.
    leaseMs: 3 * config.webhookTimeoutMs,
    retryScale: config.webhookRetryMs / FIRST_RETRY_MS,
    allowPrivate: config.webhookAllowPrivate,
    killAt: config.webhookKillAt,
    onEvent: (event) => log(event, 'webhook'),
  });
  const scans = startScanThread({
    databaseUrl: config.databaseUrl,
    leaseMs: config.scanLeaseS * 1000,
    pollMs: SCAN_POLL_MS,
    retentionMs: config.scanRetentionDays * DAY_MS,
    changesRetentionMs: config.changesRetentionDays * DAY_MS,
    pruneEveryMs: SCAN_PRUNE_MS,
    // Dismissals and exemptions that expired, on the same thread and loop (pipeline.md §6, docs/DESIGN.md §110).
    expiryEveryMs: config.expiryIntervalS * 1000,
    killAt: config.scanKillAt,
    onEvent: (event) => {
      if (event.status === 'succeeded' || event.status === 'expired') webhooks.wake();
      log(event, 'scan');
    },
  });
  return {
    scanQueued: () => scans.wake(),
    stop: async () => void (await Promise.all([scans.stop(), webhooks.stop()])),
  };
}

export async function startServer(
  config: Readonly<Config>,
  storage: Storage,
  parts: ServerParts = {},
): Promise<RunningServer> {
  const metrics = parts.metrics ?? createMetrics(storage);
  const https =
    config.tlsCert && config.tlsKey
      ? { cert: readPem(config.tlsCert, 'certificate'), key: readPem(config.tlsKey, 'key') }
      : undefined;
  const lifecycle = { draining: false };
  const logs: { to?: FastifyInstance['log'] } = {};
  const background = parts.background ?? startBackground(config, (event, what) => logs.to?.info(event, what));
  const app = await buildApp({
    storage,
    lifecycle,
    scanQueued: () => background.scanQueued(),
    logger: { level: config.logLevel },
    http: {
      rateLimitPerMinute: config.rateLimitPerMinute,
      requestTimeoutMs: config.requestTimeoutMs,
      compression: { ...defaultHttpOptions.compression, cacheBytes: config.keptBodiesMb * 1024 * 1024 },
      metrics,
      metricsToken: config.metricsToken,
      https,
      publicUrl: config.publicUrl,
      scanMaxBytes: config.scanMaxBytes,
    },
  }).catch(async (error: unknown) => {
    await background.stop();
    throw error;
  });
  logs.to = app.log;
  // An app that does not serve is closed before the error goes up (its timers would keep the process alive).
  const closeOnFailure = async (error: unknown): Promise<never> => {
    await app.close();
    await background.stop();
    throw error;
  };
  await listening('the API', config.host, config.port, '--port', () =>
    app.listen({ host: config.host, port: config.port }).catch(closeOnFailure),
  );
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;

  const metricsServer =
    config.metricsPort === undefined
      ? undefined
      : await serveMetrics(config.host, config.metricsPort, metrics).catch(closeOnFailure);
  const metricsUrl = metricsServer?.url;

  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => {
    resolveClosed = resolve;
  });
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      clearTimeout(grace);
      lifecycle.draining = true;
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      // Stop accepting and let in-flight requests finish; past the bound, cut the remaining connections.
      // Keep-alive connections that turn idle once their last request is answered are closed as they do.
      const idle = setInterval(() => app.server.closeIdleConnections(), 50);
      const force = setTimeout(() => app.server.closeAllConnections(), config.shutdownTimeoutMs);
      try {
        await app.close();
      } finally {
        clearInterval(idle);
        clearTimeout(force);
      }
      await metricsServer?.close();
      // A scan being applied finishes first; one queued stays queued for the next start or another process. A batch
      // being sent is answered (or times out) first; the next waits for the next start or another process.
      await background.stop();
      await storage.close();
      resolveClosed();
    })();
    return closing;
  };
  // A signal drains first: /readyz fails at once and every answer says `Connection: close`, while requests are still
  // served (those already queued in the listen backlog included) for the grace period; then the listener closes and
  // in-flight requests finish. Closing the listener at once reset the connections waiting in its backlog.
  let grace: NodeJS.Timeout | undefined;
  const drain = (signal?: NodeJS.Signals) => {
    if (lifecycle.draining) return;
    lifecycle.draining = true;
    app.log.info({ signal, graceMs: config.shutdownGraceMs }, 'shutting down');
    grace = setTimeout(() => void close(), config.shutdownGraceMs);
  };
  // A second signal skips what is left of the grace period.
  const onSignal = (signal: NodeJS.Signals) => (lifecycle.draining ? void close() : drain(signal));
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const url = `${https ? 'https' : 'http'}://${hostForUrl(config.host)}:${port}`;
  return { app, url, metricsUrl, closed, drain: () => drain(), close };
}

/** What a metrics port serves: a registry's text (several processes' summed, in the primary of src/cluster.ts). */
export interface MetricsText {
  text(): Promise<string>;
  contentType: string;
}

/**
 * Metrics on their own port: reachable by a scraper on the network without exposing them on the API port. Closed by
 * the caller.
 */
export async function serveMetrics(
  host: string,
  metricsPort: number,
  metrics: MetricsText,
): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((request, response) => {
    if (request.method !== 'GET' || request.url !== '/metrics') {
      response.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found\n');
      return;
    }
    metrics.text().then(
      (text) => response.writeHead(200, { 'Content-Type': metrics.contentType }).end(text),
      () => response.writeHead(500).end(),
    );
  });
  await listening(
    'metrics',
    host,
    metricsPort,
    '--metrics-port',
    () =>
      new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(metricsPort, host, () => resolve());
      }),
  );
  const address = server.address();
  return {
    url: `http://${hostForUrl(host)}:${typeof address === 'object' && address ? address.port : metricsPort}/metrics`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
