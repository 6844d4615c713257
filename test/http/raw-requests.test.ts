// Requests that Node itself would answer outside the contract, sent as raw bytes to a listening server: every answer
// is JSON in the error shape with an X-Request-Id, never a closed socket or an empty body.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setup, type TestContext } from '../helpers.js';

let ctx: TestContext;
let port: number;
beforeAll(async () => {
  ctx = await setup();
  await ctx.app.listen({ host: '127.0.0.1', port: 0 });
  const address = ctx.app.server.address();
  port = typeof address === 'object' && address ? address.port : 0;
});
afterAll(async () => ctx.close());

/** Sends raw bytes and reads until the server closes the connection (or 5 s pass). */
const exchange = (bytes: string): Promise<string> =>
  new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    socket.setTimeout(5000, () => socket.destroy());
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
    });
    socket.on('close', () => resolve(received));
    socket.on('error', reject);
    socket.write(bytes);
  });

/** Status, headers (lower-cased names) and the JSON body of one HTTP/1.1 answer. */
function parse(answer: string) {
  const [head = '', payload = ''] = answer.split('\r\n\r\n');
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers = Object.fromEntries(
    lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
  );
  return { status: Number(statusLine.split(' ')[1]), headers, body: JSON.parse(payload) as unknown };
}

const inErrorShape = (code: string) => ({ errors: [{ code, message: expect.any(String) }] });

describe('answers Node would give outside the contract', () => {
  it('CONNECT is 405 in the error shape, not a closed socket', async () => {
    const answer = parse(await exchange('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n'));
    expect(answer.status).toBe(405);
    expect(answer.headers.allow).toBe('GET, HEAD');
    expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(answer.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(answer.body).toEqual(inErrorShape('method_not_allowed'));
  });

  it('an Expect other than 100-continue is 417 in the error shape, not an empty body', async () => {
    const answer = parse(await exchange('GET /v1/tenant/assets HTTP/1.1\r\nHost: x\r\nExpect: foo\r\n\r\n'));
    expect(answer.status).toBe(417);
    expect(answer.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(answer.body).toEqual(inErrorShape('expectation_failed'));
  });

  it('an HTTP/1.1 request without Host is 400 in the error shape with a request id', async () => {
    const answer = parse(await exchange('GET /v1/tenant/assets HTTP/1.1\r\nConnection: close\r\n\r\n'));
    expect(answer.status).toBe(400);
    expect(answer.headers['x-request-id']).toBeTruthy();
    expect(answer.body).toEqual(inErrorShape('invalid_parameter'));
  });

  it('an HTTP/1.0 request without Host is served as usual (401 without a key)', async () => {
    const answer = parse(await exchange('GET /v1/tenant/assets HTTP/1.0\r\n\r\n'));
    expect(answer.status).toBe(401);
    expect(answer.body).toEqual(inErrorShape('unauthorized'));
  });

  it('a malformed request line is 400 in the error shape with a request id', async () => {
    const answer = parse(await exchange('NOT HTTP AT ALL\r\n\r\n'));
    expect(answer.status).toBe(400);
    expect(answer.headers['x-request-id']).toBeTruthy();
    expect(answer.body).toEqual(inErrorShape('invalid_parameter'));
  });
});
