import { apiConnectOptions, type Config } from '../config.js';
import { startServer } from '../server.js';
import { openDatabase, type Io } from './io.js';

export async function serveCommand(config: Readonly<Config>, io: Io): Promise<void> {
  const storage = await openDatabase(
    config.databaseUrl,
    io,
    apiConnectOptions(config, (error) => {
      io.stderr.write(`secinv: a database connection failed and will be replaced: ${error.message}\n`);
    }),
  );
  const server = await startServer(config, storage).catch(async (error: unknown) => {
    await storage.close();
    throw error;
  });
  io.stderr.write(
    `secinv: serving ${server.url} (database ${storage.dialect}), console at ${server.url}/console/${server.metricsUrl ? `, metrics at ${server.metricsUrl}` : ''}\n`,
  );
  await server.closed;
}
