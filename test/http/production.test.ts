// The production surface: rate limits, compression, conditional GETs, probes, metrics, logs, limits, TLS, shutdown.
import { execFileSync } from 'node:child_process';
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:net';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { securityHeaders } from '../../src/http/security-headers.js';
import { buildApp } from '../../src/app.js';
import { UserError } from '../../src/domain/errors.js';
import { loadConfig } from '../../src/config.js';
import { createMetrics } from '../../src/http/metrics.js';
import { startServer } from '../../src/server.js';
import { openStorage, type Storage } from '../../src/storage/index.js';
import { A1, fixture } from '../fixtures.js';
import { exitCodeAfter, spawnServe } from './serve-process.js';
import { openStorageWithKeys, steadyPort, TENANT_A, TENANT_B, TEST_DIALECT, type TestStorage } from '../helpers.js';

let admin: TestStorage;
let api: Storage;
let key: string;
let keyB: string;
beforeAll(async () => {
  ({
    opened: admin,
    keys: [key, keyB],
  } = await openStorageWithKeys(fixture, [TENANT_A, TENANT_B]));
  api = await openStorage(admin.url, { role: 'api' });
});
afterAll(async () => {
  await api.close();
  await admin.dispose();
});

const auth = (k = key) => ({ authorization: `Bearer ${k}` });

describe('rate limiting per key', () => {
  it('sends RateLimit-* headers in seconds and answers 429 with Retry-After past the limit, per key', async () => {
    const app = await buildApp({ storage: api, http: { rateLimitPerMinute: 3 } });
    try {
      for (const remaining of [2, 1, 0]) {
        const res = await app.inject({ url: '/v1/tenant/assets?perPage=1', headers: auth() });
        expect(res.statusCode).toBe(200);
        expect(res.headers['ratelimit-limit']).toBe('3');
        expect(res.headers['ratelimit-remaining']).toBe(String(remaining));
        const reset = Number(res.headers['ratelimit-reset']);
        expect(Number.isInteger(reset) && reset >= 1 && reset <= 60).toBe(true);
      }
      const limited = await app.inject({ url: '/v1/tenant/assets?perPage=1', headers: auth() });
      expect(limited.statusCode).toBe(429);
      expect(limited.json()).toEqual({
        errors: [{ code: 'rate_limited', message: expect.stringMatching(/^more than 3 requests per minute/) }],
      });
      const retryAfter = Number(limited.headers['retry-after']);
      expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60).toBe(true);
      expect(limited.headers['ratelimit-remaining']).toBe('0');
      // Another key has its own budget; probes are not limited.
      expect((await app.inject({ url: '/v1/tenant/assets?perPage=1', headers: auth(keyB) })).statusCode).toBe(200);
      expect((await app.inject({ url: '/livez' })).statusCode).toBe(200);
    } finally {
      await app.close();
    }
  });
});

describe('HTTP behaviour', () => {
  let app: Awaited<ReturnType<typeof buildApp>>;
  beforeAll(async () => {
    app = await buildApp({ storage: api });
  });
  afterAll(async () => app.close());

  it('compresses with gzip or brotli when asked, and not otherwise', async () => {
    const plain = await app.inject({ url: '/v1/tenant/assets', headers: auth() });
    expect(plain.headers['content-encoding']).toBeUndefined();
    const gzip = await app.inject({ url: '/v1/tenant/assets', headers: { ...auth(), 'accept-encoding': 'gzip' } });
    expect(gzip.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gzip.rawPayload).toString()).toBe(plain.body);
    const br = await app.inject({ url: '/v1/tenant/assets', headers: { ...auth(), 'accept-encoding': 'br' } });
    expect(br.headers['content-encoding']).toBe('br');
    expect(brotliDecompressSync(br.rawPayload).toString()).toBe(plain.body);
    expect(br.rawPayload.length).toBeLessThan(plain.rawPayload.length / 3);
  });

  it('tags every 200 with an ETag, answers 304 to If-None-Match, and marks tenant data private', async () => {
    const first = await app.inject({ url: `/v1/tenant/assets/${A1}`, headers: auth() });
    const etag = String(first.headers.etag);
    expect(etag).toMatch(/^W\/"[A-Za-z0-9_-]+"$/);
    expect(first.headers['cache-control']).toBe('private');
    const again = await app.inject({ url: `/v1/tenant/assets/${A1}`, headers: { ...auth(), 'if-none-match': etag } });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
    expect(
      (
        await app.inject({
          url: `/v1/tenant/assets/${A1}`,
          headers: { ...auth(), 'if-none-match': `"other", ${etag.slice(2)}` },
        })
      ).statusCode,
    ).toBe(304);
    const other = await app.inject({
      url: '/v1/tenant/assets?perPage=1',
      headers: { ...auth(), 'if-none-match': etag },
    });
    expect(other.statusCode).toBe(200);
    expect(other.headers.etag).not.toBe(etag);
    // The same path for another tenant is another entity.
    const b = await app.inject({ url: `/v1/tenant/assets/${A1}`, headers: { ...auth(keyB), 'if-none-match': etag } });
    expect(b.statusCode).toBe(200);
    for (const res of [
      await app.inject({ url: '/v1/tenant/assets' }),
      await app.inject({ url: '/v1/tenant/assets/nope', headers: auth() }),
    ]) {
      expect(res.headers.etag).toBeUndefined();
    }
  });

  it("sets helmet's security headers on every answer: data, errors, unknown paths, health, kept bytes", async () => {
    const expected = await securityHeaders();
    expect(expected).toMatchObject({
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'x-frame-options': 'SAMEORIGIN',
      'strict-transport-security': 'max-age=31536000; includeSubDomains',
      'cross-origin-resource-policy': 'same-origin',
    });
    expect(Object.keys(expected).length).toBeGreaterThanOrEqual(10);
    for (const res of [
      await app.inject({ url: '/v1/tenant/assets', headers: auth() }),
      await app.inject({ url: '/v1/tenant/assets', headers: auth() }), // from the kept bytes
      await app.inject({ url: '/v1/tenant/assets' }),
      await app.inject({ url: '/v1/tenant/assets?page=0', headers: auth() }),
      await app.inject({ url: '/no/such/path' }),
      await app.inject({ url: '/livez' }),
    ])
      expect(res.headers, `${res.statusCode} ${res.body.slice(0, 80)}`).toMatchObject(expected);
  });

  it('/livez and /readyz answer without authentication', async () => {
    for (const url of ['/livez', '/readyz']) {
      const res = await app.inject({ url });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ status: 'ok' });
    }
  });

  it('a request target over 8192 characters is 414 in the error shape', async () => {
    const res = await app.inject({ url: `/v1/tenant/assets?query=${'x'.repeat(8200)}`, headers: auth() });
    expect(res.statusCode).toBe(414);
    expect(res.json()).toEqual({
      errors: [{ code: 'uri_too_long', message: 'the request target is longer than 8192 characters' }],
    });
  });

  it('/readyz is 503 when the database is gone', async () => {
    const storage = await openStorage(admin.url, { role: 'api' });
    const lonely = await buildApp({ storage });
    await storage.close();
    const res = await lonely.inject({ url: '/readyz' });
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe('2');
    await lonely.close();
  });
});

describe('metrics', () => {
  it('are served with a token on the API port, and without one on the metrics port', async () => {
    const metrics = createMetrics(api);
    const app = await buildApp({ storage: api, http: { metrics, metricsToken: 'a-metrics-token-of-some-length' } });
    try {
      await app.inject({ url: '/v1/tenant/assets', headers: auth() });
      expect((await app.inject({ url: '/metrics' })).statusCode).toBe(401);
      expect((await app.inject({ url: '/metrics', headers: { authorization: 'Bearer wrong' } })).statusCode).toBe(401);
      const res = await app.inject({
        url: '/metrics',
        headers: { authorization: 'Bearer a-metrics-token-of-some-length' },
      });
      expect(res.statusCode).toBe(200);
      expect(res.body).toMatch(
        /secinv_http_requests_total\{method="GET",route="\/v1\/tenant\/assets",status="200"\} 1/,
      );
      expect(res.body).toMatch(
        /secinv_http_request_duration_seconds_bucket\{le="0.005",method="GET",route="\/v1\/tenant\/assets",status="200"\}/,
      );
      if (TEST_DIALECT === 'postgres') expect(res.body).toMatch(/secinv_db_pool_connections\{state="total"\} \d+/);
    } finally {
      await app.close();
    }
    const config = loadConfig({ db: admin.url, port: '0', metricsPort: '0' }, { SECINV_LOG_LEVEL: 'silent' });
    const storage = await openStorage(admin.url, { role: 'api' });
    const server = await startServer(config, storage);
    try {
      const scraped = await fetch(server.metricsUrl!);
      expect(scraped.status).toBe(200);
      expect(await scraped.text()).toContain('secinv_http_request_duration_seconds');
      expect((await fetch(`${server.url}/metrics`)).status).toBe(404);
    } finally {
      await server.close();
    }
  });
});

describe('an address that cannot be listened on', () => {
  it('is one line naming the address and the flag to change, and leaves nothing listening', async () => {
    const config = loadConfig({ db: admin.url, port: '0' }, { SECINV_LOG_LEVEL: 'silent' });
    const storage = await openStorage(admin.url, { role: 'api' });
    const first = await startServer(config, storage);
    const port = Number(new URL(first.url).port);
    try {
      // Each start with a storage of its own, which a running server's close() closes.
      const start = async (flags: Record<string, string>) => {
        const own = await openStorage(admin.url, { role: 'api' });
        return startServer(loadConfig({ db: admin.url, ...flags }, { SECINV_LOG_LEVEL: 'silent' }), own).catch(
          async (error: unknown) => {
            await own.close();
            throw error;
          },
        );
      };
      await expect(start({ port: String(port) })).rejects.toThrow(
        new UserError(
          `cannot serve the API on 127.0.0.1:${port} (EADDRINUSE): the port is in use (another secinv, or another server?): give another --port`,
        ),
      );
      // The API listens first; when the metrics port is taken it is closed again, so its port is free after.
      const apiPort = await steadyPort();
      await expect(start({ port: String(apiPort), metricsPort: String(port) })).rejects.toThrow(
        `cannot serve metrics on 127.0.0.1:${port} (EADDRINUSE): the port is in use (another secinv, or another server?): give another --metrics-port`,
      );
      const again = await start({ port: String(apiPort) });
      await again.close();
      // An address of the documentation range (RFC 5737), which no interface has.
      await expect(start({ host: '192.0.2.1', port: '0' })).rejects.toThrow(
        'cannot serve the API on 192.0.2.1:0 (EADDRNOTAVAIL): no network interface of this machine has this address: give another --host',
      );
    } finally {
      await first.close();
    }
  });
});

describe('logs', () => {
  it('one JSON line per request with request id, tenant, route, status and duration; never a key', async () => {
    const stream = new PassThrough();
    let output = '';
    stream.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    const app = await buildApp({ storage: api, logger: { level: 'info', stream } });
    try {
      await app.inject({ url: '/v1/tenant/assets?perPage=1', headers: { ...auth(), 'x-request-id': 'req-1' } });
      await app.inject({
        url: '/v1/tenant/assets',
        headers: { authorization: `Bearer ${key}x`, 'x-request-id': 'req-2' },
      });
      await app.inject({
        url: '/v1/tenant/assets?bogus=1',
        headers: { authorization: `bearer   ${key}  `, 'x-request-id': 'req-3' },
      });
      await app.inject({ url: '/nope', headers: { ...auth(), cookie: `k=${key}` } });
    } finally {
      await app.close();
    }
    const lines = output
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const requests = lines.filter((l) => l.msg === 'request');
    expect(requests).toHaveLength(4);
    expect(requests[0]).toMatchObject({
      reqId: 'req-1',
      tenantId: TENANT_A,
      method: 'GET',
      route: '/v1/tenant/assets',
      status: 200,
    });
    expect(typeof requests[0]!.durationMs).toBe('number');
    expect(requests[1]).toMatchObject({ reqId: 'req-2', status: 401 });
    expect(requests[2]).toMatchObject({ reqId: 'req-3', status: 400, tenantId: TENANT_A });
    expect(output).not.toContain(key);
    expect(output).not.toContain(key.slice(7));
  });
});

describe('TLS, limits on the wire, shutdown', () => {
  it('serves HTTPS with --tls-cert/--tls-key', async () => {
    const dir = admin.dir;
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
        '-days',
        '1',
        '-subj',
        '/CN=localhost',
      ],
      { stdio: 'ignore' },
    );
    const config = loadConfig(
      { db: admin.url, port: '0', tlsCert: join(dir, 'cert.pem'), tlsKey: join(dir, 'key.pem') },
      { SECINV_LOG_LEVEL: 'silent' },
    );
    const storage = await openStorage(admin.url, { role: 'api' });
    const server = await startServer(config, storage);
    try {
      expect(server.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      const { status, body } = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        httpsRequest(
          `${server.url}/v1/tenant/assets?perPage=1`,
          { headers: auth(), rejectUnauthorized: false },
          (res) => {
            let text = '';
            res.on('data', (c: Buffer) => {
              text += c.toString();
            });
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
          },
        )
          .on('error', reject)
          .end();
      });
      expect(status).toBe(200);
      expect(JSON.parse(body).meta.total).toBe(6);
    } finally {
      await server.close();
    }
  });

  it('headers over 16 KiB are 431 in the error shape', async () => {
    const storage = await openStorage(admin.url, { role: 'api' });
    const server = await startServer(loadConfig({ db: admin.url, port: '0' }, { SECINV_LOG_LEVEL: 'silent' }), storage);
    try {
      const { port } = new URL(server.url);
      const raw = await new Promise<string>((resolve, reject) => {
        const socket = connect(Number(port), '127.0.0.1', () => {
          socket.write(`GET /v1/tenant/assets HTTP/1.1\r\nHost: x\r\nX-Big: ${'y'.repeat(20_000)}\r\n\r\n`);
        });
        let text = '';
        socket.on('data', (c) => {
          text += c.toString();
        });
        socket.on('end', () => resolve(text));
        socket.on('error', reject);
      });
      expect(raw).toMatch(/^HTTP\/1\.1 431 /);
      expect(raw).toMatch(/\r\nX-Request-Id: [0-9a-f-]{36}\r\n/);
      expect(JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4))).toEqual({
        errors: [{ code: 'headers_too_large', message: 'the request headers are larger than 16 KiB' }],
      });
    } finally {
      await server.close();
    }
  });

  it('a connection that stalls longer than the request timeout is closed', async () => {
    const app = await buildApp({ storage: api, http: { requestTimeoutMs: 300 } });
    await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const { port } = app.server.address() as { port: number };
      const started = Date.now();
      const closedAfter = await new Promise<number>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1', () => socket.write('GET /livez HTTP/1.1\r\nHost: x\r\n'));
        socket.on('close', () => resolve(Date.now() - started));
        socket.on('error', () => undefined);
        setTimeout(() => reject(new Error('still open after 5 s')), 5000);
      });
      expect(closedAfter).toBeGreaterThanOrEqual(250);
    } finally {
      await app.close();
    }
  });

  it.skipIf(TEST_DIALECT !== 'postgres')('shutdown lets an in-flight request finish, then closes', async () => {
    const storage = await openStorage(admin.url, { role: 'api', statementTimeoutMs: 10_000 });
    const server = await startServer(loadConfig({ db: admin.url, port: '0' }, { SECINV_LOG_LEVEL: 'silent' }), storage);
    const locker = new pg.Client({ connectionString: admin.url });
    await locker.connect();
    await locker.query('begin');
    await locker.query('lock table assets in access exclusive mode');
    const inFlight = fetch(`${server.url}/v1/tenant/assets?perPage=1`, { headers: auth() });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const closing = server.close();
    await new Promise((resolve) => setTimeout(resolve, 200));
    await locker.query('rollback');
    await locker.end();
    const res = await inFlight;
    expect(res.status).toBe(200);
    expect(((await res.json()) as { meta: { total: number } }).meta.total).toBe(6);
    await closing;
    await expect(fetch(`${server.url}/livez`)).rejects.toThrow();
  });

  it('the serve command exits 0 on SIGTERM', async () => {
    const { child } = await spawnServe(admin.url, { SECINV_SHUTDOWN_GRACE_MS: '0' });
    expect(await exitCodeAfter(child, 'SIGTERM')).toBe(0);
  }, 60_000);
});
