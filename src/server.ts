// Listens: builds the app around an open storage, serves until SIGINT/SIGTERM, then shuts down gracefully.
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { buildApp, defaultHttpOptions } from './app.js';
import type { Config } from './config.js';
import { fileErrorReason, UserError } from './domain/errors.js';
import { createMetrics } from './http/metrics.js';
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
  close(): Promise<void>;
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

export async function startServer(config: Readonly<Config>, storage: Storage): Promise<RunningServer> {
  const metrics = createMetrics(storage);
  const https =
    config.tlsCert && config.tlsKey
      ? { cert: readPem(config.tlsCert, 'certificate'), key: readPem(config.tlsKey, 'key') }
      : undefined;
  const lifecycle = { draining: false };
  // Uploaded scans are applied by this process too, on a thread of its own (docs/DESIGN.md §98).
  const logs: { to?: FastifyInstance['log'] } = {};
  // And its webhooks are sent from a thread of their own, woken by each scan applied here (docs/DESIGN.md §104).
  const webhooks = startWebhookThread({
    databaseUrl: config.databaseUrl,
    pollMs: WEBHOOK_POLL_MS,
    timeoutMs: config.webhookTimeoutMs,
    // Longer than a batch's forming and its send: a claim is renewed at each batch.
    leaseMs: 3 * config.webhookTimeoutMs,
    retryScale: config.webhookRetryMs / FIRST_RETRY_MS,
    allowPrivate: config.webhookAllowPrivate,
    killAt: config.webhookKillAt,
    onEvent: (event) => logs.to?.info(event, 'webhook'),
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
      logs.to?.info(event, 'scan');
    },
  });
  const stopThreads = () => Promise.all([scans.stop(), webhooks.stop()]);
  const app = await buildApp({
    storage,
    lifecycle,
    scanQueued: () => scans.wake(),
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
    await stopThreads();
    throw error;
  });
  logs.to = app.log;
  // An app that does not serve is closed before the error goes up (its timers would keep the process alive).
  const closeOnFailure = async (error: unknown): Promise<never> => {
    await app.close();
    await stopThreads();
    throw error;
  };
  await listening('the API', config.host, config.port, '--port', () =>
    app.listen({ host: config.host, port: config.port }).catch(closeOnFailure),
  );
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;

  // Metrics on their own port: reachable by a scraper on the network without exposing them on the API port.
  let metricsServer: Server | undefined;
  let metricsUrl: string | undefined;
  if (config.metricsPort !== undefined) {
    const server = createServer((request, response) => {
      if (request.method !== 'GET' || request.url !== '/metrics') {
        response.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found\n');
        return;
      }
      metrics.registry.metrics().then(
        (text) => response.writeHead(200, { 'Content-Type': metrics.registry.contentType }).end(text),
        () => response.writeHead(500).end(),
      );
    });
    metricsServer = server;
    const metricsPort = config.metricsPort;
    await listening('metrics', config.host, metricsPort, '--metrics-port', () =>
      new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(metricsPort, config.host, () => resolve());
      }).catch(closeOnFailure),
    );
    const metricsAddress = server.address();
    metricsUrl = `http://${hostForUrl(config.host)}:${typeof metricsAddress === 'object' && metricsAddress ? metricsAddress.port : config.metricsPort}/metrics`;
  }

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
      await new Promise<void>((resolve) => (metricsServer ? metricsServer.close(() => resolve()) : resolve()));
      // A scan being applied finishes first; one queued stays queued for the next start or another process. A batch
      // being sent is answered (or times out) first; the next waits for the next start or another process.
      await stopThreads();
      await storage.close();
      resolveClosed();
    })();
    return closing;
  };
  // A signal drains first: /readyz fails at once and every answer says `Connection: close`, while requests are still
  // served (those already queued in the listen backlog included) for the grace period; then the listener closes and
  // in-flight requests finish. Closing the listener at once reset the connections waiting in its backlog.
  let grace: NodeJS.Timeout | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    // A second signal skips what is left of the grace period.
    if (lifecycle.draining) return void close();
    lifecycle.draining = true;
    app.log.info({ signal, graceMs: config.shutdownGraceMs }, 'shutting down');
    grace = setTimeout(() => void close(), config.shutdownGraceMs);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return { app, url: `${https ? 'https' : 'http'}://${hostForUrl(config.host)}:${port}`, metricsUrl, closed, close };
}
