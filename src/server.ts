// Listens: builds the app around an open storage, serves until SIGINT/SIGTERM, then closes cleanly.
import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import type { Config } from './config.js';
import type { Storage } from './storage/index.js';

export interface RunningServer {
  app: FastifyInstance;
  url: string;
  /** Resolves once the server has stopped (after a signal or close()). */
  closed: Promise<void>;
  close(): Promise<void>;
}

export async function startServer(config: Readonly<Config>, storage: Storage): Promise<RunningServer> {
  const app = await buildApp({ storage, logger: { level: config.logLevel } });
  await app.listen({ host: config.host, port: config.port });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;

  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => { resolveClosed = resolve; });
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      // Stop accepting, let in-flight requests finish, then release the database.
      await app.close();
      await storage.close();
      resolveClosed();
    })();
    return closing;
  };
  const onSignal = (signal: NodeJS.Signals) => {
    app.log.info({ signal }, 'shutting down');
    void close();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return { app, url: `http://${host}:${port}`, closed, close };
}
