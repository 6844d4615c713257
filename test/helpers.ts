// Shared test setup: a real database per test file, filled through the real import path, and the app around it.
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, inject } from 'vitest';
import { buildApp } from '../src/app.js';
import { fileSource, importSources, type ImportResult } from '../src/import/importer.js';
import { newKey } from '../src/domain/keys.js';
import type { Scope } from '../src/domain/scopes.js';
import type { Kysely } from 'kysely';
import { connect } from '../src/storage/db/connect.js';
import { defaultConnectOptions } from '../src/storage/db/connection.js';
import { openStorage, type ConnectOptions, type Storage } from '../src/storage/index.js';
import { tenantReader, type TenantReader } from '../src/storage/tx/read.js';
import type { Database } from '../src/storage/db/tables.js';
import { adminQuery, databaseUrl, testDatabasePrefix } from './postgres-admin.js';
import { fixture } from './fixtures.js';
import { ndjson, type ImportRecord } from './records.js';

export interface TestContext {
  /** The administrative storage (import, keys); the app reads through its own API-role storage. */
  storage: Storage;
  apiStorage: Storage;
  app: FastifyInstance;
  dir: string;
  /** The database's URL, for raw access (rawTenantAccess). */
  url: string;
  close(): Promise<void>;
}

export type TestDialect = 'sqlite' | 'postgres';

/** The dialect of this test run (vitest.config.ts sets it per project); SQLite when unset. */
export const TEST_DIALECT: TestDialect = process.env.SECINV_TEST_DIALECT === 'postgres' ? 'postgres' : 'sqlite';

/** Dialects the storage tests run on: SECINV_TEST_DIALECTS (comma list), default both. */
export const TEST_DIALECTS = (process.env.SECINV_TEST_DIALECTS ?? 'sqlite,postgres')
  .split(',')
  .map((d) => d.trim()) as TestDialect[];

export interface TestStorage {
  storage: Storage;
  dir: string;
  url: string;
  /** Closes the storage and removes the database. */
  dispose(): Promise<void>;
}

/**
 * A fresh database of the dialect: a file in a temporary folder, or a PostgreSQL database of its own. Empty, or with
 * `migrated`, a copy of the run's migrated template (test/global-setup.ts) where there is one: what opening an empty
 * one would migrate it to, without running the migrations again. With `withFixture`, a copy of the migrated template
 * into which the contract fixture (test/fixtures.ts) was imported.
 */
export async function createTestDatabase(
  dialect: TestDialect = TEST_DIALECT,
  { migrated = false, withFixture = false }: { migrated?: boolean; withFixture?: boolean } = {},
): Promise<{ url: string; dir: string; drop: () => Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'secinv-test-'));
  const templates = withFixture ? inject('fixtureTemplates') : migrated ? inject('migratedTemplates') : undefined;
  if (dialect === 'sqlite') {
    if (templates !== undefined) copyFileSync(templates.sqlite, join(dir, 'test.db'));
    return {
      url: `sqlite:${join(dir, 'test.db')}`,
      dir,
      drop: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  const name = `${testDatabasePrefix()}${Math.random().toString(36).slice(2, 10)}`;
  const template = templates?.postgres;
  await adminQuery(`create database ${name}${template ? ` template ${template}` : ''}`);
  return {
    url: databaseUrl(name),
    dir,
    // Dropped without waiting: PostgreSQL 15 checkpoints for every drop, which took over a second beside the other
    // test files' writes. Not left for the end either: autovacuum worked through the databases left meanwhile. What a
    // worker thread did not drop before the run ended, the global teardown does (test/global-setup.ts).
    drop: () => {
      void adminQuery(`drop database if exists ${name} with (force)`).catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
      return Promise.resolve();
    },
  };
}

export async function openTestStorage(
  dialect: TestDialect = TEST_DIALECT,
  { withFixture = false }: { withFixture?: boolean } = {},
): Promise<TestStorage> {
  const database = await createTestDatabase(dialect, { migrated: true, withFixture });
  const storage = await openStorage(database.url);
  return {
    storage,
    dir: database.dir,
    url: database.url,
    dispose: async () => {
      await storage.close();
      await database.drop();
    },
  };
}

/**
 * Runs `body` on a new test database: its storage, and a Kysely connection of its own for statements no storage
 * function makes. Both are closed and the database dropped afterwards, whatever `body` does.
 */
export async function withTestDatabase(
  dialect: TestDialect,
  body: (opened: TestStorage, db: Kysely<Database>) => Promise<void>,
): Promise<void> {
  const opened = await openTestStorage(dialect);
  const { db } = await connect(opened.url);
  try {
    await body(opened, db);
  } finally {
    await db.destroy();
    await opened.dispose();
  }
}

export async function setup(
  dialect: TestDialect = TEST_DIALECT,
  apiOptions: Partial<ConnectOptions> = {},
): Promise<TestContext> {
  return appOn(await openTestStorage(dialect), apiOptions);
}

/** The app over an opened test database, reading it through storage of its own in the API role. */
async function appOn(opened: TestStorage, apiOptions: Partial<ConnectOptions>): Promise<TestContext> {
  const apiStorage = await openStorage(opened.url, { role: 'api', ...apiOptions });
  const app = await buildApp({ storage: apiStorage });
  return {
    storage: opened.storage,
    apiStorage,
    app,
    dir: opened.dir,
    url: opened.url,
    async close() {
      await app.close();
      await apiStorage.close();
      await opened.dispose();
    },
  };
}

/**
 * Imports NDJSON text or records given as `[kind, record]` pairs, as `test.ndjson`; with `readingThread`, from a file
 * that the import's reading thread reads.
 */
export async function importRecords(
  storage: Storage,
  records: ImportRecord[] | string,
  dryRun = false,
  readingThread = false,
): Promise<ImportResult> {
  const text = typeof records === 'string' ? records : ndjson(records);
  const name = 'test.ndjson';
  if (!readingThread)
    return importSources(storage, [{ name, open: () => Readable.from([Buffer.from(text)]) }], { dryRun });
  const dir = mkdtempSync(join(tmpdir(), 'secinv-import-'));
  try {
    const path = join(dir, name);
    writeFileSync(path, text);
    return await importSources(storage, [{ ...fileSource(path), name }], { dryRun, readingThread });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function createKey(
  storage: Storage,
  tenantId: string,
  options: { expiresAt?: string | null; scopes?: readonly Scope[] } = {},
): Promise<string> {
  const key = newKey();
  await storage.insertKey({
    id: key.id,
    tenantId,
    name: 'test',
    prefix: key.prefix,
    keyHash: key.keyHash,
    createdAt: new Date().toISOString(),
    expiresAt: options.expiresAt ?? null,
    scopes: options.scopes,
  });
  return key.key;
}

/** A key for each tenant of T, in its order. */
type KeysOf<T extends readonly string[]> = { [I in keyof T]: string };

/**
 * A test database holding these records, imported through the import path (which must take every one), and a key for
 * each tenant named, in that order. The contract fixture alone is not imported again: the database is a copy of the
 * template that holds its import (test/global-setup.ts).
 */
export async function openStorageWithKeys<const T extends readonly string[]>(
  records: ImportRecord[],
  tenants: T,
  dialect: TestDialect = TEST_DIALECT,
): Promise<{ opened: TestStorage; keys: KeysOf<T> }> {
  // Without a PostgreSQL template (see test/global-setup.ts) the database starts empty and is filled here.
  const withFixture = records === fixture && inject('fixtureTemplates')[dialect] !== null;
  const opened = await openTestStorage(dialect, { withFixture });
  const { problems } = withFixture ? { problems: [] } : await importRecords(opened.storage, records);
  if (problems.length > 0) {
    await opened.dispose();
    throw new Error(`the records did not import: ${JSON.stringify(problems.slice(0, 3))}`);
  }
  const keys: string[] = [];
  for (const tenant of tenants) keys.push(await createKey(opened.storage, tenant));
  return { opened, keys: keys as KeysOf<T> };
}

/**
 * setup() over these records with a key for each tenant named (in that order), and the SQL of every statement the
 * app's storage runs, for tests that count statements per request.
 */
export async function setupWithKeys<const T extends readonly string[]>(
  records: ImportRecord[],
  tenants: T,
  apiOptions: Partial<ConnectOptions> = {},
): Promise<{ ctx: TestContext; statements: string[]; keys: KeysOf<T> }> {
  const statements: string[] = [];
  const { opened, keys } = await openStorageWithKeys(records, tenants);
  const ctx = await appOn(opened, { ...apiOptions, onQuery: (sql) => void statements.push(sql) });
  return { ctx, statements, keys };
}

/**
 * setupWithKeys() for a whole test file: run in beforeAll, closed in afterAll. The context, keys (in the order of
 * `tenants`) and statements are on the returned object once the hook has run.
 */
export function sharedSetup<const T extends readonly string[]>(
  records: ImportRecord[],
  tenants: T,
): Awaited<ReturnType<typeof setupWithKeys<T>>> {
  const shared = {} as Awaited<ReturnType<typeof setupWithKeys<T>>>;
  beforeAll(async () => {
    Object.assign(shared, await setupWithKeys(records, tenants));
  });
  afterAll(async () => shared.ctx.close());
  return shared;
}

export { ORG_A, ORG_B, TENANT_A, TENANT_B } from './records.js';

/**
 * Raw Kysely access to a database as storage itself runs it, each piece of work inside the tenant's scope (on
 * PostgreSQL, the transaction-local tenant that row-level security reads). For tests of the database's own walls and
 * of rows the API does not expose; not part of the storage interface.
 */
export async function rawTenantAccess(
  url: string,
  role: 'admin' | 'api' = 'admin',
): Promise<{ withTenant: TenantReader; db: Kysely<Database>; close(): Promise<void> }> {
  const { db, dialect } = await connect(url, { ...defaultConnectOptions, role });
  return { withTenant: tenantReader(db, dialect, 'read write'), db, close: () => db.destroy() };
}

/** Listens on loopback `port` (0: the operating system's pick) and closes again: the port, or undefined when taken. */
const listenOnce = (port: number): Promise<number | undefined> =>
  new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(undefined));
    server.listen(port, '127.0.0.1', () => {
      const { port: bound } = server.address() as AddressInfo;
      server.close(() => resolve(bound));
    });
  });

const EPHEMERAL_RANGE = '/proc/sys/net/ipv4/ip_local_port_range';

/**
 * A loopback port nothing listens on now, below the range the kernel hands out by itself: for a server a test starts
 * later, or stops and starts again, on the same port. Any outgoing connection, or another listen on port 0, may take a
 * port of that range (freePort's) in between.
 */
export async function steadyPort(): Promise<number> {
  const range = existsSync(EPHEMERAL_RANGE) ? readFileSync(EPHEMERAL_RANGE, 'utf8') : '';
  const lowest = Number(range.trim().split(/\s+/)[0]) || 32_768;
  for (;;) {
    const port = await listenOnce(10_000 + Math.floor(Math.random() * (lowest - 10_000)));
    if (port !== undefined) return port;
  }
}

/** A loopback port nothing listens on now (the operating system's pick, released at once). */
export async function freePort(): Promise<number> {
  const port = await listenOnce(0);
  if (port === undefined) throw new Error('no loopback port to listen on');
  return port;
}
