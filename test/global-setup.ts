// Once per test run: an empty database of each dialect with every migration applied, which test/helpers.ts copies for
// each test that opens storage. Migrating a new PostgreSQL database costs ~0.3 s (its DDL), and the suite opens
// hundreds of them on two cores shared with everything else; a copy of the migrated template costs what creating an
// empty database costs. The migrations themselves are still run by every test that starts from an empty database
// (test/storage/db/migrations/migrations.test.ts and the others that call createTestDatabase).
//
// Also once per run: the command line bundled from the sources as the build bundles it (scripts/bundle.ts), for the
// tests that run `secinv` as a process of its own (test/http/serve-process.ts).
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { TestProject } from 'vitest/node';
import { bundleCli } from '../scripts/bundle.js';
import { openStorage } from '../src/storage/index.js';
import { adminQuery, databaseUrl } from './postgres-admin.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A migrated SQLite file to copy, and a migrated PostgreSQL database to use as a template (null: none). */
    migratedTemplates: { sqlite: string; postgres: string | null };
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

async function migrate(url: string): Promise<void> {
  const storage = await openStorage(url);
  await storage.close();
}

interface Prepared {
  dir: string;
  sqlite: string;
  postgres: string | null;
  cliBundle: string;
}

async function prepare(): Promise<Prepared> {
  const dir = mkdtempSync(join(tmpdir(), 'secinv-template-'));
  const sqlite = join(dir, 'migrated.db');
  await migrate(`sqlite:${sqlite}`);
  const name = `secinv_template_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  let postgres: string | null = null;
  try {
    await adminQuery(`create database ${name}`);
    postgres = name;
    await migrate(databaseUrl(name));
  } catch (error) {
    // Without PostgreSQL (a run of SQLite's tests alone), its tests migrate each database themselves, or fail to
    // connect as they would have.
    if (postgres !== null) await adminQuery(`drop database if exists ${name} with (force)`);
    postgres = null;
    console.warn(`no migrated PostgreSQL template (each database is migrated instead): ${(error as Error).message}`);
  }
  return { dir, sqlite, postgres, cliBundle: await bundle(dir) };
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
  const { dir, sqlite, postgres, cliBundle } = await shared.prepared;
  project.provide('migratedTemplates', { sqlite, postgres });
  project.provide('cliBundle', cliBundle);
  return async () => {
    shared.users -= 1;
    if (shared.users > 0) return;
    store[SHARED] = undefined;
    if (postgres !== null) await adminQuery(`drop database if exists ${postgres} with (force)`);
    rmSync(dir, { recursive: true, force: true });
  };
}
