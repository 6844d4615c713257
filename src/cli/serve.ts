import { apiConnectOptions, type Config } from '../config.js';
import { isServingProcess, runServing, startPrimary } from '../cluster.js';
import { startServer } from '../server.js';
import { openStorage } from '../storage/index.js';
import { failureLine } from './failure.js';
import { openDatabase, type Io } from './io.js';

export async function serveCommand(config: Readonly<Config>, io: Io): Promise<void> {
  const connectOptions = (settings: Readonly<Config>) =>
    apiConnectOptions(settings, (error) => {
      io.stderr.write(`secinv: a database connection failed and will be replaced: ${error.message}\n`);
    });
  // One of several serving processes (docs/DESIGN.md §112): the primary has opened the database and named it.
  if (isServingProcess())
    return runServing(config, (share) => openStorage(config.databaseUrl, connectOptions(share)), failureLine);
  const storage = await openDatabase(config.databaseUrl, io, connectOptions(config));
  const serving = (url: string, metricsUrl: string | undefined) =>
    io.stderr.write(
      `secinv: serving ${url} (database ${storage.dialect}), console at ${url}/console/${metricsUrl ? `, metrics at ${metricsUrl}` : ''}\n`,
    );
  if (config.workers > 1) {
    // Opened here first, so that the schema is migrated once and a database that cannot be served is refused once.
    await storage.close();
    const primary = await startPrimary(config);
    serving(primary.url, primary.metricsUrl);
    return primary.closed;
  }
  const server = await startServer(config, storage).catch(async (error: unknown) => {
    await storage.close();
    throw error;
  });
  serving(server.url, server.metricsUrl);
  await server.closed;
}
