// Several `secinv serve` processes on one database: each has its own storage and count cache, and an import made
// elsewhere is seen by all of them on their next request.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { hashKey } from '../../src/domain/keys.js';
import { openStorage, type Storage } from '../../src/storage/index.js';
import { fixture } from '../fixtures.js';
import { createKey, importRecords, openStorageWithKeys, TENANT_A, type TestStorage } from '../helpers.js';

let admin: TestStorage;
const servers: { storage: Storage; app: FastifyInstance }[] = [];
let key: string;

beforeAll(async () => {
  ({
    opened: admin,
    keys: [key],
  } = await openStorageWithKeys(fixture, [TENANT_A]));
  for (let i = 0; i < 2; i += 1) {
    const storage = await openStorage(admin.url, { role: 'api' });
    servers.push({ storage, app: await buildApp({ storage }) });
  }
});
afterAll(async () => {
  for (const { app, storage } of servers) {
    await app.close();
    await storage.close();
  }
  await admin.dispose();
});

const total = async (app: FastifyInstance, query: string) => {
  const res = await app.inject({ url: `/v1/tenant/assets?${query}`, headers: { authorization: `Bearer ${key}` } });
  expect(res.statusCode).toBe(200);
  return res.json().meta.total as number;
};

it('every process sees an import made by another process on its next request', async () => {
  for (const { app } of servers) expect(await total(app, 'providers=GCP')).toBe(1);
  await importRecords(admin.storage, [
    [
      'asset',
      {
        tenantId: TENANT_A,
        id: 'sirn:assets:another-gcp',
        provider: 'GCP',
        type: 'GCP::Storage::Bucket',
        firstObservedAt: '2024-01-01',
        lastObservedAt: '2024-01-01',
      },
    ],
  ]);
  for (const { app } of servers) expect(await total(app, 'providers=GCP')).toBe(2);
});

it('a key revoked through one process is refused by all', async () => {
  const other = await createKey(admin.storage, TENANT_A);
  const [first, second] = servers;
  const ask = (app: FastifyInstance) =>
    app.inject({ url: '/v1/tenant/assets', headers: { authorization: `Bearer ${other}` } });
  expect((await ask(first!.app)).statusCode).toBe(200);
  const { keyId } = (await admin.storage.findKeyByHash(hashKey(other)))!;
  expect(await admin.storage.revokeKey(keyId, new Date().toISOString())).toBe(true);
  expect((await ask(first!.app)).statusCode).toBe(401);
  expect((await ask(second!.app)).statusCode).toBe(401);
});
