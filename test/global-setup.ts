// Once per test run: an empty database of each dialect with every migration applied, which test/helpers.ts copies for
// each test that opens storage. Migrating a new PostgreSQL database costs ~0.3 s (its DDL), and the suite opens
// hundreds of them on two cores shared with everything else; a copy of the migrated template costs what creating an
// empty database costs. The migrations themselves are still run by every test that starts from an empty database
// (test/storage/db/migrations/migrations.test.ts and the others that call createTestDatabase).
//
// A second template of each dialect holds the contract fixture (test/fixtures.ts) imported through the import path:
// most of the HTTP, ingest and CLI files start from it, and its import cost each of them ~0.4 s on PostgreSQL.
//
// Also once per run: the command line bundled from the sources as the build bundles it (scripts/bundle.ts), for the
// tests that run `secinv` as a process of its own (test/http/serve-process.ts).
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import type { TestProject } from 'vitest/node';
import { bundleCli } from '../scripts/bundle.js';
import { importSources } from '../src/import/importer.js';
import { openStorage } from '../src/storage/index.js';
import { fixture } from './fixtures.js';
import { adminQuery, databaseUrl, testDatabasePrefix } from './postgres-admin.js';
import { ndjson } from './records.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A migrated SQLite file to copy, and a migrated PostgreSQL database to use as a template (null: none). */
    migratedTemplates: Templates;
    /** The same, holding the contract fixture as test/helpers.ts importRecords imports it. */
    fixtureTemplates: Templates;
    /** The bundled command line (dist/bundle/secinv.js of a folder laid out as the package). */
    cliBundle: string;
  }
}

/**
 * The sources bundled into a folder laid out as the package is (package.json, node_modules, dist/bundle/ and
 * dist/console/), so that what the code finds relative to itself (`../../package.json`, the code under `..` it
 * fingerprints, the built console) is where it looks.
 */
async function bundle(dir: string): Promise<string> {
  const root = join(dir, 'package');
  mkdirSync(join(root, 'dist'), { recursive: true });
  copyFileSync('package.json', join(root, 'package.json'));
  symlinkSync(resolve('node_modules'), join(root, 'node_modules'));
  symlinkSync(resolve('dist', 'console'), join(root, 'dist', 'console'));
  await bundleCli(join(root, 'dist', 'bundle'));
  return join(root, 'dist', 'bundle', 'secinv.js');
}

interface Templates {
  sqlite: string;
  postgres: string | null;
}

/** Opens the database (migrating it), imports the fixture when asked, and closes it: a template ready to copy. */
async function fill(url: string, withFixture: boolean): Promise<void> {
  const storage = await openStorage(url);
  try {
    if (!withFixture) return;
    const open = () => Readable.from([Buffer.from(ndjson(fixture))]);
    const { problems } = await importSources(storage, [{ name: 'test.ndjson', open }], { dryRun: false });
    if (problems.length > 0) throw new Error(`the fixture did not import: ${JSON.stringify(problems.slice(0, 3))}`);
  } finally {
    await storage.close();
  }
}

interface Prepared {
  dir: string;
  migrated: Templates;
  withFixture: Templates;
  cliBundle: string;
}

async function prepare(): Promise<Prepared> {
  const dir = mkdtempSync(join(tmpdir(), 'secinv-template-'));
  const sqlite = { migrated: join(dir, 'migrated.db'), withFixture: join(dir, 'fixture.db') };
  await fill(`sqlite:${sqlite.migrated}`, false);
  copyFileSync(sqlite.migrated, sqlite.withFixture);
  await fill(`sqlite:${sqlite.withFixture}`, true);
  const name = `secinv_template_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  const postgres = { migrated: null as string | null, withFixture: null as string | null };
  try {
    await adminQuery(`create database ${name}`);
    postgres.migrated = name;
    await fill(databaseUrl(name), false);
    await adminQuery(`create database ${name}_fixture template ${name}`);
    postgres.withFixture = `${name}_fixture`;
    await fill(databaseUrl(postgres.withFixture), true);
  } catch (error) {
    // Without PostgreSQL (a run of SQLite's tests alone), its tests migrate each database themselves, or fail to
    // connect as they would have.
    await dropTemplates(postgres);
    postgres.migrated = postgres.withFixture = null;
    console.warn(`no migrated PostgreSQL template (each database is migrated instead): ${(error as Error).message}`);
  }
  return {
    dir,
    migrated: { sqlite: sqlite.migrated, postgres: postgres.migrated },
    withFixture: { sqlite: sqlite.withFixture, postgres: postgres.withFixture },
    cliBundle: await bundle(dir),
  };
}

/** The run's test databases still there: each test drops its own without waiting (test/helpers.ts). */
async function dropTestDatabases(): Promise<void> {
  const prefix = testDatabasePrefix();
  const rows = await adminQuery(`select datname from pg_database where starts_with(datname, '${prefix}')`).catch(
    () => [],
  );
  const names = rows.map(({ datname }) => String(datname));
  // A few at a time: drops that run together share their checkpoints.
  for (let i = 0; i < names.length; i += 8)
    await Promise.all(names.slice(i, i + 8).map((name) => adminQuery(`drop database if exists ${name} with (force)`)));
}

async function dropTemplates(names: Record<string, string | null>): Promise<void> {
  for (const name of Object.values(names))
    if (name !== null) await adminQuery(`drop database if exists ${name} with (force)`);
}

// Vitest runs this setup for the root and for each project that extends it (four times in a full run), each time from a
// fresh copy of this module but in one process: the first call prepares, the others share it through the process's
// global object, and the last teardown removes it.
interface Shared {
  prepared: Promise<Prepared>;
  users: number;
}
const SHARED = Symbol.for('secinv.test.globalSetup');
const store = globalThis as unknown as Record<symbol, Shared | undefined>;

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const shared = (store[SHARED] ??= { prepared: prepare(), users: 0 });
  shared.users += 1;
  const { dir, migrated, withFixture, cliBundle } = await shared.prepared;
  project.provide('migratedTemplates', migrated);
  project.provide('fixtureTemplates', withFixture);
  project.provide('cliBundle', cliBundle);
  return async () => {
    shared.users -= 1;
    if (shared.users > 0) return;
    store[SHARED] = undefined;
    await dropTestDatabases();
    await dropTemplates({ fixture: withFixture.postgres, migrated: migrated.postgres });
    rmSync(dir, { recursive: true, force: true });
  };
}
