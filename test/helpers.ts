// Shared test setup: a real database per test file, filled through the real import path, and the app around it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/app.js';
import { importSources, type ImportResult } from '../src/import/importer.js';
import { newKey } from '../src/keys.js';
import { openStorage, type Storage } from '../src/storage/index.js';

export interface TestContext {
  storage: Storage;
  app: FastifyInstance;
  dir: string;
  close(): Promise<void>;
}

export async function openTestStorage(): Promise<{ storage: Storage; dir: string; url: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'secinv-test-'));
  const url = `sqlite:${join(dir, 'test.db')}`;
  return { storage: await openStorage(url), dir, url };
}

export async function setup(): Promise<TestContext> {
  const { storage, dir } = await openTestStorage();
  const app = await buildApp({ storage });
  return {
    storage, app, dir,
    async close() {
      await app.close();
      await storage.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Imports NDJSON text or records given as `[kind, record]` pairs. */
export async function importRecords(storage: Storage, records: [string, Record<string, unknown>][] | string, dryRun = false): Promise<ImportResult> {
  const text = typeof records === 'string' ? records : records.map(([kind, record]) => JSON.stringify({ kind, record })).join('\n');
  return importSources(storage, [{ name: 'test.ndjson', open: () => Readable.from([text]) }], { dryRun });
}

export async function createKey(storage: Storage, tenantId: string, options: { expiresAt?: string | null } = {}): Promise<string> {
  const key = newKey();
  await storage.insertKey({ id: key.id, tenantId, name: 'test', prefix: key.prefix, keyHash: key.keyHash, createdAt: new Date().toISOString(), expiresAt: options.expiresAt ?? null });
  return key.key;
}

export const TENANT_A = '11111111-1111-4111-8111-111111111111';
export const TENANT_B = '22222222-2222-4222-8222-222222222222';
export const ORG_A = 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa';
export const ORG_B = 'bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb';
