// PostgreSQL going away and coming back, and statements that run too long: 503 with Retry-After, never a crash or a
// hung request, and recovery without restarting. The API reaches PostgreSQL through a TCP proxy the test can cut.
import net from 'node:net';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { openStorage, type Storage } from '../../src/storage/index.js';
import { fixture } from '../fixtures.js';
import { createKey, createTestDatabase, importRecords, TENANT_A, TEST_DIALECT } from '../helpers.js';

function tcpProxy(targetPort: number) {
  let server: net.Server | undefined;
  const sockets = new Set<net.Socket>();
  const track = (socket: net.Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  return {
    start: (port = 0) =>
      new Promise<number>((resolve, reject) => {
        server = net.createServer((client) => {
          const upstream = net.connect(targetPort, '127.0.0.1');
          track(client);
          track(upstream);
          client.pipe(upstream).pipe(client);
          client.on('close', () => upstream.destroy());
          upstream.on('close', () => client.destroy());
        });
        server.once('error', reject);
        server.listen(port, '127.0.0.1', () => resolve((server!.address() as net.AddressInfo).port));
      }),
    stop: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        if (server) server.close(() => resolve());
        else resolve();
      }),
  };
}

describe.skipIf(TEST_DIALECT !== 'postgres')('PostgreSQL unavailability', () => {
  const proxy = tcpProxy(5432);
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let admin: Storage;
  let api: Storage;
  let app: FastifyInstance;
  let key: string;
  let port: number;
  const idleErrors: Error[] = [];

  beforeAll(async () => {
    database = await createTestDatabase('postgres');
    admin = await openStorage(database.url);
    await importRecords(admin, fixture);
    key = await createKey(admin, TENANT_A);
    port = await proxy.start();
    const apiUrl = new URL(database.url);
    apiUrl.username = 'secinv_api';
    apiUrl.port = String(port);
    api = await openStorage(database.url, {
      role: 'api',
      apiUrl: apiUrl.toString(),
      poolMax: 2,
      connectTimeoutMs: 500,
      statementTimeoutMs: 300,
      onConnectionError: (error) => idleErrors.push(error),
    });
    app = await buildApp({ storage: api });
  });
  afterAll(async () => {
    await app.close();
    await api.close();
    await admin.close();
    await proxy.stop();
    await database.drop();
  });

  const list = () => app.inject({ url: '/v1/tenant/assets?perPage=1', headers: { authorization: `Bearer ${key}` } });

  function expect503(res: Awaited<ReturnType<typeof list>>) {
    expect(res.statusCode, res.body).toBe(503);
    expect(res.headers['retry-after']).toBe('2');
    expect(res.json()).toEqual({
      errors: [{ code: 'unavailable', message: 'the database is unavailable or overloaded; retry shortly' }],
    });
  }

  /** Retries like a client honouring Retry-After would (without the wait), until a non-503 answer. */
  async function untilAnswered(attempts = 10) {
    for (let i = 0; i < attempts; i += 1) {
      const res = await list();
      if (res.statusCode !== 503) return { res, attempts: i + 1 };
    }
    throw new Error('still 503');
  }

  it('answers 503 while the database is unreachable and recovers by itself when it is back', async () => {
    expect((await list()).statusCode).toBe(200);
    await proxy.stop();
    // Both the broken pooled connections and new connection attempts fail fast with 503.
    expect503(await list());
    expect503(await list());
    expect503(await list());
    await proxy.start(port);
    const { res, attempts } = await untilAnswered();
    expect(res.statusCode).toBe(200);
    expect(attempts).toBeLessThanOrEqual(3);
    expect(res.json().meta.total).toBe(6);
  });

  it('recovers after the server terminates its connections', async () => {
    expect((await list()).statusCode).toBe(200);
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    const { rowCount } = await client.query(
      "select pg_terminate_backend(pid) from pg_stat_activity where usename = 'secinv_api' and datname = current_database()",
    );
    await client.end();
    expect(rowCount).toBeGreaterThan(0);
    const { res } = await untilAnswered();
    expect(res.statusCode).toBe(200);
  });

  it('a statement that outlives the statement timeout is cancelled and answered 503', async () => {
    const locker = new pg.Client({ connectionString: database.url });
    await locker.connect();
    try {
      await locker.query('begin');
      await locker.query('lock table assets in access exclusive mode');
      expect503(await list());
    } finally {
      await locker.query('rollback');
      await locker.end();
    }
    expect((await list()).statusCode).toBe(200);
  });
});
