// A real server for the client tests: a database of the run's dialect filled with a generated inventory of two
// tenants (through the import path), a key for each, and the app listening on an ephemeral loopback port.
import { createServer } from 'node:net';
import { Readable } from 'node:stream';
import { afterAll, beforeAll } from 'vitest';
import { buildApp, type HttpOptions } from '../../src/app.js';
import { generateRecords } from '../../src/generate/generator.js';
import { importSources } from '../../src/import/importer.js';
import { openStorage, type Storage } from '../../src/storage/index.js';
import { createKey, openTestStorage, type TestStorage } from '../helpers.js';

/** Large enough that every walk takes more than one page of the largest size: 1000 assets, 2000 findings, 100 risks. */
export const INVENTORY = { seed: 'client', tenants: 2, assets: 1100, findingsPerAsset: 2, risks: 230 };

export interface TestServer {
  url: string;
  keys: [string, string];
  tenants: [string, string];
  storage: Storage;
  /** The database's URL, for raw access (rawTenantAccess). */
  databaseUrl: string;
  /** Another app on the same database, listening too, with options of its own (a rate limit, say). */
  listen(http: Partial<HttpOptions>): Promise<string>;
}

const tenantIds = (): [string, string] => {
  const ids: string[] = [];
  for (const line of generateRecords(INVENTORY)) {
    if (line.startsWith('{"kind":"tenant"'))
      ids.push((JSON.parse(line) as { record: { tenantId: string } }).record.tenantId);
  }
  return ids as [string, string];
};

/** The server for a test file: started in beforeAll, closed in afterAll. */
export function sharedServer(): TestServer {
  const server = {} as TestServer;
  let database: TestStorage;
  const closers: (() => Promise<void>)[] = [];
  beforeAll(async () => {
    database = await openTestStorage();
    const result = await importSources(
      database.storage,
      [
        {
          name: 'generated.ndjson',
          open: () =>
            Readable.from(
              (function* () {
                for (const l of generateRecords(INVENTORY)) yield `${l}\n`;
              })(),
            ),
        },
      ],
      { dryRun: false },
    );
    if (result.problemCount > 0) throw new Error(`the inventory did not import: ${JSON.stringify(result.problems[0])}`);
    const tenants = tenantIds();
    const keys: [string, string] = [
      await createKey(database.storage, tenants[0]),
      await createKey(database.storage, tenants[1]),
    ];
    const listen = async (http: Partial<HttpOptions>) => {
      const apiStorage = await openStorage(database.url, { role: 'api' });
      const app = await buildApp({ storage: apiStorage, http });
      const url = await app.listen({ host: '127.0.0.1', port: 0 });
      closers.push(async () => {
        await app.close();
        await apiStorage.close();
      });
      return url;
    };
    Object.assign(server, {
      url: await listen({}),
      keys,
      tenants,
      storage: database.storage,
      databaseUrl: database.url,
      listen,
    });
  }, 180_000);
  afterAll(async () => {
    for (const close of closers) await close();
    await database?.dispose();
  });
  return server;
}

/** The URL of a loopback port nothing listens on (it was free a moment ago): connections to it are refused. */
export async function closedPort(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}`;
}
