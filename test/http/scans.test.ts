// Scans over HTTP (pipeline.md §2) through app.inject on a real database: an upload stored and queued, applied by the
// scan runner in this process, and read back; key scopes; the answers to bad uploads.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { receive } from '../../src/modules/scans/receive.js';
import { scanRunner } from '../../src/ingest/scan-runner.js';
import { fixture } from '../fixtures.js';
import { newScan } from '../records.js';
import { createKey, setupWithKeys, TENANT_A, TENANT_B, TEST_DIALECT, type TestContext } from '../helpers.js';

const TRIVY = readFileSync(
  new URL('../fixtures/ingest/trivy/trivy-image-example-app-all-statuses.json', import.meta.url),
);

let ctx: TestContext;
let readKey: string;
let ingestKey: string;
let bothKey: string;
let otherIngestKey: string;
let set: Awaited<ReturnType<typeof setupWithKeys<readonly [typeof TENANT_A, typeof TENANT_B]>>>;
beforeAll(async () => {
  set = await setupWithKeys(fixture, [TENANT_A, TENANT_B] as const);
  ctx = set.ctx;
  readKey = set.keys[0];
  ingestKey = await createKey(ctx.storage, TENANT_A, { scopes: ['ingest'] });
  bothKey = await createKey(ctx.storage, TENANT_A, { scopes: ['read', 'ingest'] });
  otherIngestKey = await createKey(ctx.storage, TENANT_B, { scopes: ['ingest'] });
});
afterAll(async () => ctx.close());

const auth = (key: string) => ({ authorization: `Bearer ${key}` });
/** The fixture's image is on no cloud registry: it says where it runs. */
const WHERE = 'provider=AWS&region=us-east-1';
const upload = (key: string, body: Buffer, query = '', headers: Record<string, string> = {}) =>
  ctx.app.inject({
    method: 'POST',
    url: `/v1/tenant/scans${query === '' ? `?${WHERE}` : `${query}&${WHERE}`}`,
    headers: { ...auth(key), 'content-type': 'application/json', ...headers },
    payload: body,
  });
const get = (key: string, url: string) => ctx.app.inject({ method: 'GET', url, headers: auth(key) });
/** Applies every queued scan, as `secinv serve`'s runner does. */
const applyQueued = () => scanRunner(ctx.storage, { owner: 'test', leaseMs: 60_000, pollMs: 1000 }).drain();

describe('POST /v1/tenant/scans', () => {
  it('stores and queues a report (202, Location), and the runner applies it: succeeded, with summary and gate', async () => {
    const answer = await upload(ingestKey, TRIVY, '?name=app.json');
    expect(answer.statusCode).toBe(202);
    const { data } = answer.json<{ data: { id: string; status: string; sizeBytes: number; keyId: string } }>();
    expect(answer.headers.location).toBe(`/v1/tenant/scans/${data.id}`);
    expect(data).toMatchObject({ status: 'queued', sizeBytes: TRIVY.length, name: 'app.json', format: null });

    await applyQueued();
    const scan = (await get(ingestKey, `/v1/tenant/scans/${data.id}`)).json<{ data: Record<string, unknown> }>().data;
    expect(scan).toMatchObject({ status: 'succeeded', format: 'trivy', problems: [] });
    const summary = scan.summary as { assetIds: string[]; findings: { added: number } };
    expect(summary.assetIds).toHaveLength(1);
    expect(summary.findings.added).toBeGreaterThan(0);
    const gate = scan.gate as { open: Record<string, number>; added: Record<string, number> };
    expect(Object.values(gate.added).reduce((a, b) => a + b, 0)).toBe(summary.findings.added);

    // What it wrote is served to a read key.
    const asset = await get(readKey, `/v1/tenant/assets/${encodeURIComponent(summary.assetIds[0]!)}`);
    expect(asset.statusCode).toBe(200);
    const found = await get(readKey, `/v1/tenant/vulnerabilities?assetIds=${encodeURIComponent(summary.assetIds[0]!)}`);
    expect(found.json<{ meta: { total: number } }>().meta.total).toBe(summary.findings.added);
  });

  it('a body that is not a report ends failed with the problem secinv ingest prints', async () => {
    const answer = await upload(ingestKey, Buffer.from('{"hello": "world"}'));
    expect(answer.statusCode).toBe(202);
    await applyQueued();
    const scan = (await get(ingestKey, answer.headers.location as string)).json<{ data: Record<string, unknown> }>();
    expect(scan.data.status).toBe('failed');
    expect(scan.data.problems).toEqual([
      { message: expect.stringContaining('is JSON but not a report secinv reads (top-level keys: hello)') as string },
    ]);
  });

  it('counts the exemptions a scan made and removed: a VEX document, the same again, and a changed one', async () => {
    const sample = (path: string) => readFileSync(new URL(`../fixtures/${path}`, import.meta.url));
    const vex = sample('ingest-own/openvex-busybox.json');
    /** Uploads the report, applies it, and answers its summary's exemptions. */
    const exemptionsOf = async (body: Buffer) => {
      const answer = await upload(ingestKey, body);
      expect(answer.statusCode).toBe(202);
      await applyQueued();
      const { data } = (await get(ingestKey, answer.headers.location as string)).json<{
        data: { status: string; summary: { exemptions: { added: number; removed: number } } };
      }>();
      expect(data.status).toBe('succeeded');
      return data.summary.exemptions;
    };
    expect(await exemptionsOf(sample('ingest/grype/grype-image-busybox-epss.json'))).toEqual({
      added: 0,
      removed: 0,
    });
    // Two of its exempting statements match the image's findings (ingest/vex.test.ts says which).
    expect(await exemptionsOf(vex)).toEqual({ added: 2, removed: 0 });
    expect(await exemptionsOf(vex)).toEqual({ added: 0, removed: 0 });
    const changed = vex
      .toString()
      .replace(
        '"status": "not_affected",\n      "justification": "vulnerable_code_not_in_execute_path"',
        '"status": "under_investigation"',
      );
    expect(changed).not.toBe(vex.toString());
    expect(await exemptionsOf(Buffer.from(changed))).toEqual({ added: 0, removed: 1 });
    expect(await exemptionsOf(vex)).toEqual({ added: 1, removed: 0 });
  });

  it('a gzip body (Content-Encoding) is decoded; one that is not gzip fails the upload and stores nothing', async () => {
    const before = (await get(bothKey, '/v1/tenant/scans?perPage=100')).json<{ data: unknown[] }>().data.length;
    const good = await upload(ingestKey, gzipSync(TRIVY), '', { 'content-encoding': 'gzip' });
    expect(good.statusCode).toBe(202);
    expect(good.json<{ data: { sizeBytes: number } }>().data.sizeBytes).toBe(TRIVY.length);
    const bad = await upload(ingestKey, TRIVY, '', { 'content-encoding': 'gzip' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toEqual({ errors: [expect.objectContaining({ code: 'invalid_parameter' })] });
    const after = (await get(bothKey, '/v1/tenant/scans?perPage=100')).json<{ data: unknown[] }>().data.length;
    expect(after).toBe(before + 1);
    await applyQueued();
  });

  it('refuses before reading: an unknown parameter, a bad value, another Content-Type', async () => {
    const unknown = await upload(ingestKey, TRIVY, '?fromat=trivy');
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json()).toEqual({
      errors: [{ code: 'unknown_parameter', field: 'fromat', message: "unknown query parameter 'fromat'" }],
    });
    expect((await upload(ingestKey, TRIVY, '?format=nessus')).statusCode).toBe(400);
    const type = await upload(ingestKey, TRIVY, '', { 'content-type': 'text/plain' });
    expect(type.statusCode).toBe(415);
    expect(type.json<{ errors: { code: string }[] }>().errors[0]!.code).toBe('unsupported_media_type');
  });

  it('a body over the limit is 413 by its Content-Length', async () => {
    const answer = await upload(ingestKey, Buffer.from('{}'), '', { 'content-length': String(2 * 1024 ** 3) });
    expect(answer.statusCode).toBe(413);
    expect(answer.json<{ errors: { code: string }[] }>().errors[0]!.code).toBe('payload_too_large');
  });

  it('a body without a length (chunked) is cut off at the limit while it is read, and nothing is stored', async () => {
    const before = (await get(bothKey, '/v1/tenant/scans?perPage=100')).json<{ data: unknown[] }>().data.length;
    // What the route hands the storage: the body as read, bounded.
    const request = {
      headers: { 'content-type': 'application/json' },
      body: Readable.from([TRIVY.subarray(0, 800), TRIVY.subarray(800, 1600), TRIVY.subarray(1600, 2400)]),
    } as unknown as FastifyRequest;
    const body = receive(request, 1024);
    const scan = newScan();
    await expect(
      ctx.apiStorage.acceptScan(scan, body.bytes, () => ({ ...body.measured(), requestHash: 'x' })),
    ).rejects.toMatchObject({
      problems: [
        { code: 'payload_too_large', message: 'the report is larger than 1024 bytes (SECINV_SCAN_MAX_BYTES)' },
      ],
    });
    const after = (await get(bothKey, '/v1/tenant/scans?perPage=100')).json<{ data: unknown[] }>().data.length;
    expect(after).toBe(before);
    if (TEST_DIALECT === 'sqlite') {
      const spool = `${ctx.url.slice('sqlite:'.length)}-scans`;
      expect(existsSync(spool) ? readdirSync(spool).filter((f) => f.startsWith(scan.id)) : []).toEqual([]);
    }
  });

  it('an Idempotency-Key answers the scan it made for the same upload (200), 409 for another', async () => {
    const headers = { 'idempotency-key': 'ci-run-42' };
    const first = await upload(ingestKey, TRIVY, '?name=a', headers);
    expect(first.statusCode).toBe(202);
    const again = await upload(ingestKey, TRIVY, '?name=a', headers);
    expect(again.statusCode).toBe(200);
    expect(again.json<{ data: { id: string } }>().data.id).toBe(first.json<{ data: { id: string } }>().data.id);
    const other = await upload(ingestKey, Buffer.from('{"other": 1}'), '?name=a', headers);
    expect(other.statusCode).toBe(409);
    expect((await upload(ingestKey, TRIVY, '?name=b', headers)).statusCode).toBe(409);
    await applyQueued();
  });
});

describe('a scan about another tenant', () => {
  it("an assetId of another tenant's asset ends failed with the message secinv ingest gives; nothing is written", async () => {
    const repo = readFileSync(new URL('../fixtures/ingest/trivy/trivy-repo-npm.json', import.meta.url));
    const answer = await upload(ingestKey, repo, '?assetId=sirn:assets:b-only');
    expect(answer.statusCode).toBe(202);
    await applyQueued();
    const scan = (await get(ingestKey, answer.headers.location as string)).json<{ data: Record<string, unknown> }>();
    expect(scan.data).toMatchObject({
      status: 'failed',
      problems: [{ message: `--asset: tenant ${TENANT_A} has no asset 'sirn:assets:b-only'` }],
    });
    // Neither tenant gained anything: A has no such asset, B's asset has no finding of the report.
    expect((await get(readKey, `/v1/tenant/assets/${encodeURIComponent('sirn:assets:b-only')}`)).statusCode).toBe(404);
    const other = await get(set.keys[1], '/v1/tenant/vulnerabilities?assetIds=sirn:assets:b-only');
    expect(other.json<{ meta: { total: number } }>().meta.total).toBe(0);
  });
});

describe('key scopes', () => {
  it('a read key cannot upload (403 naming the scope); an ingest key cannot read the inventory', async () => {
    const upload403 = await upload(readKey, TRIVY);
    expect(upload403.statusCode).toBe(403);
    expect(upload403.json()).toEqual({
      errors: [
        {
          code: 'forbidden',
          message: "this key lacks the 'ingest' scope this operation needs (secinv keys create --scope)",
        },
      ],
    });
    for (const url of ['/v1/tenant/assets', '/v1/tenant/vulnerabilities', '/v1/tenant/risks'])
      expect((await get(ingestKey, url)).statusCode).toBe(403);
  });

  it('an ingest key without read sees only its own uploads; a read key sees all; another tenant sees none', async () => {
    const mine = await upload(ingestKey, TRIVY);
    const theirs = await upload(bothKey, TRIVY);
    const id = (r: typeof mine) => r.json<{ data: { id: string } }>().data.id;
    expect((await get(ingestKey, `/v1/tenant/scans/${id(theirs)}`)).statusCode).toBe(404);
    expect((await get(readKey, `/v1/tenant/scans/${id(mine)}`)).statusCode).toBe(200);
    const listed = (await get(ingestKey, '/v1/tenant/scans?perPage=100')).json<{ data: { keyId: string }[] }>().data;
    expect(new Set(listed.map((s) => s.keyId)).size).toBe(1);
    const other = await get(otherIngestKey, `/v1/tenant/scans/${id(mine)}`);
    expect(other.statusCode).toBe(404);
    expect((await get(otherIngestKey, '/v1/tenant/scans')).json<{ data: unknown[] }>().data).toEqual([]);
    await applyQueued();
  });
});
