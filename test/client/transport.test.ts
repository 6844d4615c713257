// What the client does with answers a healthy secinv rarely gives: 503 and 429 retried after the wait they name, other
// errors never retried, a server that never answers, a download cut off midway, a follower stopped during a retry's
// wait; and the change log position an export's header names. A scripted HTTP server on a loopback port plays the
// server's part.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createClient, SecinvApiError, SecinvConnectionError } from '../../src/client/index.js';
import { buildUrl, retryAfterSeconds, retryDelayMs } from '../../src/client/transport.js';

type Handler = (request: IncomingMessage, response: ServerResponse, n: number) => void;
const servers: ReturnType<typeof createServer>[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((resolve) => s.close(resolve));
  }
});

/** A server answering request n (from 1) with the handler; resolves to its URL and the requests it saw. */
async function scripted(handler: Handler): Promise<{ url: string; requests: IncomingMessage[] }> {
  const requests: IncomingMessage[] = [];
  const server = createServer((request, response) => {
    requests.push(request);
    handler(request, response, requests.length);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
}

const error =
  (status: number, code: string, headers: Record<string, string> = {}) =>
  (response: ServerResponse) =>
    response
      .writeHead(status, { 'content-type': 'application/json', 'x-request-id': `req-${status}`, ...headers })
      .end(JSON.stringify({ errors: [{ code, message: `${code} here` }] }));
const page = (response: ServerResponse) =>
  response
    .writeHead(200, { 'content-type': 'application/json' })
    .end(JSON.stringify({ data: [{ id: 'r1' }], meta: { perPage: 1, total: 1, cursor: null } }));

describe('retries', () => {
  it('a 503 and a 429 are retried, after the Retry-After they carry', async () => {
    const { url, requests } = await scripted((_q, response, n) =>
      n === 1
        ? error(503, 'unavailable', { 'retry-after': '0' })(response)
        : n === 2
          ? error(429, 'rate_limited', { 'retry-after': '0' })(response)
          : page(response),
    );
    const result = await createClient({ baseUrl: url, apiKey: 'k', retries: 2 }).risks.list();
    expect(result.data).toEqual([{ id: 'r1' }]);
    expect(requests).toHaveLength(3);
    expect(requests.every((r) => r.headers.authorization === 'Bearer k')).toBe(true);
  });

  it('gives up after the retries it was given, with the last error', async () => {
    const { url, requests } = await scripted((_q, response) =>
      error(503, 'unavailable', { 'retry-after': '0' })(response),
    );
    const failure = await createClient({ baseUrl: url, apiKey: 'k', retries: 2 })
      .risks.list()
      .catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(SecinvApiError);
    expect(failure).toMatchObject({ status: 503, code: 'unavailable', requestId: 'req-503', retryAfter: 0 });
    expect(requests).toHaveLength(3);
  });

  it.each([
    [400, 'invalid_parameter'],
    [401, 'unauthorized'],
    [404, 'not_found'],
    [500, 'internal'],
  ])('a %i is not retried', async (status, code) => {
    const { url, requests } = await scripted((_q, response) => error(status, code)(response));
    await expect(createClient({ baseUrl: url, apiKey: 'k', retries: 3 }).assets.list()).rejects.toMatchObject({
      status,
      code,
    });
    expect(requests).toHaveLength(1);
  });

  it('waits what Retry-After says (seconds or a date), else 250 ms doubling with jitter', () => {
    expect(retryDelayMs(0, 2)).toBe(2000);
    expect(retryAfterSeconds('7')).toBe(7);
    expect(retryAfterSeconds(new Date(Date.UTC(2030, 0, 1, 0, 0, 30)).toUTCString(), Date.UTC(2030, 0, 1))).toBe(30);
    expect(retryAfterSeconds(null)).toBeUndefined();
    for (const attempt of [0, 1, 2, 3]) {
      const wait = retryDelayMs(attempt, undefined);
      expect(wait).toBeGreaterThanOrEqual(125 * 2 ** attempt);
      expect(wait).toBeLessThanOrEqual(250 * 2 ** attempt);
    }
  });
});

describe('failures without an answer', () => {
  it('a server that never answers times out, naming the URL', async () => {
    const { url } = await scripted(() => undefined);
    const failure = await createClient({ baseUrl: url, apiKey: 'k', timeoutMs: 200 })
      .assets.list()
      .catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(SecinvConnectionError);
    expect(failure).toMatchObject({ timedOut: true });
    expect((failure as Error).message).toContain(url);
  });

  it('a download cut off midway is an error, never a shorter result', async () => {
    const { url } = await scripted((_q, response) => {
      response.writeHead(200, { 'content-type': 'application/x-ndjson' });
      response.write('{"id":"r1"}\n{"id":"r2"}\n');
      setTimeout(() => response.socket?.destroy(), 50);
    });
    const seen: unknown[] = [];
    const failure = await (async () => {
      for await (const risk of createClient({ baseUrl: url, apiKey: 'k' }).risks.export()) seen.push(risk);
    })().catch((e: unknown) => e);
    expect(seen).toEqual([{ id: 'r1' }, { id: 'r2' }]);
    expect(failure).toBeInstanceOf(SecinvConnectionError);
  });

  it("an error page that is not the API's shape still becomes a typed error", async () => {
    const { url } = await scripted((_q, response) => response.writeHead(502).end('<html>bad gateway</html>'));
    await expect(createClient({ baseUrl: url, apiKey: 'k' }).assets.list()).rejects.toMatchObject({
      status: 502,
      code: 'internal',
    });
  });
});

describe('stopping and positions', () => {
  it("a follower's signal ends it during a retry's wait, without the error", async () => {
    const { url, requests } = await scripted((_q, response) =>
      error(503, 'unavailable', { 'retry-after': '30' })(response),
    );
    const controller = new AbortController();
    const client = createClient({ baseUrl: url, apiKey: 'k', retries: 3, maxRetryDelayMs: 60_000 });
    const feed = client.changes.follow(undefined, { signal: controller.signal });
    setTimeout(() => controller.abort(), 200);
    const started = Date.now();
    expect(await feed.next()).toEqual({ done: true, value: undefined });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(requests).toHaveLength(1);
  });

  it("an export's changesCursor is its Secinv-Changes-Cursor header, once the answer has arrived", async () => {
    const { url } = await scripted((request, response) => {
      const headers: Record<string, string> = { 'content-type': 'application/x-ndjson' };
      if (request.url?.startsWith('/v1/tenant/assets')) headers['secinv-changes-cursor'] = 'WzEsNywiY2hhbmdlcyJd.sig';
      response.writeHead(200, headers).end('{"id":"a1"}\n{"id":"a2"}\n');
    });
    const client = createClient({ baseUrl: url, apiKey: 'k' });
    const assets = client.assets.export();
    expect(assets.changesCursor).toBeUndefined();
    expect((await assets.next()).value).toEqual({ id: 'a1' });
    expect(assets.changesCursor).toBe('WzEsNywiY2hhbmdlcyJd.sig');
    const risks = client.risks.export();
    for await (const _ of risks) expect(risks.changesCursor).toBeUndefined();
  });
});

describe('the request', () => {
  it('joins lists with commas, leaves undefined out, keeps a path prefix', () => {
    expect(
      buildUrl('https://h.example/secinv/', '/v1/tenant/risks', {
        severityLevels: ['HIGH', 'LOW'],
        ids: undefined,
        perPage: 5,
      }),
    ).toBe('https://h.example/secinv/v1/tenant/risks?severityLevels=HIGH%2CLOW&perPage=5');
  });

  it('refuses a base URL that is not http(s)', () => {
    expect(() => createClient({ baseUrl: 'localhost:8080', apiKey: 'k' })).toThrow(/http/);
  });
});
