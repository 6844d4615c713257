// Where a webhook may go (pipeline.md §5): loopback, private, link-local, metadata and unspecified addresses are
// refused, IPv4-mapped and NAT64 forms of them too, at create and at each send, a name after it is resolved (by the
// lookup the connection itself uses, so a second resolution cannot answer another address); a send follows no
// redirect and gives up at its timeout; its signature verifies with the standardwebhooks package.
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newWebhookSecret } from '../../src/domain/webhooks.js';
import { checkDestination, checkedLookup, refusedAddress } from '../../src/webhooks/destinations.js';
import { sendSigned } from '../../src/webhooks/send.js';

describe('refusedAddress', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.9.9.9', 'loopback'],
    ['::1', 'loopback'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['10.1.2.3', 'private'],
    ['172.20.0.1', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'],
    ['fd12:3456::1', 'private'],
    ['169.254.169.254', 'metadata'],
    ['fd00:ec2::254', 'metadata'],
    ['169.254.10.10', 'link-local'],
    ['fe80::1', 'link-local'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:169.254.169.254', 'metadata'],
    ['64:ff9b::7f00:1', 'loopback'],
    ['64:ff9b::a9fe:a9fe', 'metadata'],
    ['224.0.0.1', 'reserved'],
    ['ff02::1', 'reserved'],
  ])('%s is %s', (address, reason) => expect(refusedAddress(address)).toBe(reason));

  it.each(['8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111', '64:ff9b::808:808'])(
    '%s is a public address',
    (address) => expect(refusedAddress(address)).toBeUndefined(),
  );
});

describe('checkDestination', () => {
  it('refuses an address literal in any spelling the URL normalises', async () => {
    for (const url of [
      'http://127.0.0.1:8080/x',
      'http://[::1]/',
      'http://0x7f.1/',
      'http://2130706433/',
      'https://[::ffff:a9fe:a9fe]/',
    ])
      await expect(checkDestination(new URL(url), false), url).rejects.toThrow(/is a (loopback|metadata) address/);
  });

  it('refuses a name that resolves to a refused address, and allows it all when private destinations are', async () => {
    await expect(checkDestination(new URL('http://localhost:9/'), false)).rejects.toThrow(
      /localhost resolves to (127\.0\.0\.1|::1), a loopback address/,
    );
    await checkDestination(new URL('http://localhost:9/'), true);
    await checkDestination(new URL('http://8.8.8.8/'), false);
  });
});

describe('a send', () => {
  let server: Server;
  let base: string;
  const hits: { url: string; headers: Record<string, string>; body: string }[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        hits.push({ url: req.url ?? '', headers: req.headers as Record<string, string>, body });
        if (req.url === '/moved') res.writeHead(302, { location: `${base}/elsewhere` }).end();
        else if (req.url === '/slow') setTimeout(() => res.writeHead(200).end(), 1500);
        else res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const body = Buffer.from('{"type":"ping"}');
  const options = { timeoutMs: 5000, allowPrivate: true };

  it('is signed as Standard Webhooks says: the receiver verifies it with the package', async () => {
    const secret = newWebhookSecret();
    const result = await sendSigned(`${base}/ok`, secret, 'msg_test_1', body, options);
    expect(result).toMatchObject({ status: 204, error: null });
    const hit = hits.find((h) => h.url === '/ok')!;
    expect(hit.headers['content-type']).toBe('application/json');
    expect(hit.headers['webhook-id']).toBe('msg_test_1');
    expect(hit.headers['webhook-signature']).toMatch(/^v1,/);
    expect(new Webhook(secret).verify(hit.body, hit.headers)).toEqual({ type: 'ping' });
    expect(() => new Webhook(newWebhookSecret()).verify(hit.body, hit.headers)).toThrow(/No matching signature/);
  });

  it('never reaches a refused destination, by address or by a name the connection itself resolves', async () => {
    const before = hits.length;
    const refused = await sendSigned(`${base}/never`, newWebhookSecret(), 'msg_test_2', body, {
      ...options,
      allowPrivate: false,
    });
    expect(refused).toMatchObject({ status: null, error: 'refused: 127.0.0.1 is a loopback address' });
    const port = (server.address() as AddressInfo).port;
    const byName = await sendSigned(`http://localhost:${port}/never`, newWebhookSecret(), 'msg_test_3', body, {
      ...options,
      allowPrivate: false,
    });
    expect(byName.error).toMatch(/^refused: localhost resolves to/);
    // The connection's own lookup refuses too, whatever an earlier check saw.
    const error = await new Promise<Error>((resolve) => {
      const req = request(`http://localhost:${port}/never`, { lookup: checkedLookup(false), agent: false }, () =>
        resolve(new Error('connected')),
      );
      req.on('error', resolve);
      req.end();
    });
    expect(error.message).toMatch(/localhost resolves to .*loopback/);
    expect(hits.length).toBe(before);
  });

  it('follows no redirect, and gives up at its timeout', async () => {
    const moved = await sendSigned(`${base}/moved`, newWebhookSecret(), 'msg_test_4', body, options);
    expect(moved).toMatchObject({ status: 302, error: `redirect to ${base}/elsewhere not followed` });
    expect(hits.some((h) => h.url === '/elsewhere')).toBe(false);
    const slow = await sendSigned(`${base}/slow`, newWebhookSecret(), 'msg_test_5', body, {
      ...options,
      timeoutMs: 300,
    });
    expect(slow).toMatchObject({ status: null, error: 'timed out after 300 ms' });
    expect(slow.durationMs).toBeGreaterThanOrEqual(290);
    expect(slow.durationMs).toBeLessThan(1500);
    const refused = await sendSigned('http://127.0.0.1:1/', newWebhookSecret(), 'msg_test_6', body, options);
    expect(refused).toMatchObject({ status: null, error: 'connection refused' });
  });
});
