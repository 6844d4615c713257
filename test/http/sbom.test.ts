// The SBOM of an asset (extensions.md §3), end to end on a real database of each dialect: a Grype report's image gets
// a signed, expiring link whose download is a CycloneDX 1.6 document that validates against the format's schema and
// lists the report's packages (with their purls) and findings; links refuse tampering, expiry, revoked keys and other
// tenants; the link is never tagged or kept, and its token never reaches a log line.
import { readFileSync } from 'node:fs';
import { PassThrough } from 'node:stream';
import { Spec, Validation } from '@cyclonedx/cyclonedx-library';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { A1, A2, A5, fixture } from '../fixtures.js';
import { createKey, setupWithKeys, TENANT_A, TENANT_B, type TestContext } from '../helpers.js';
import { ingestTexts } from '../ingest/run.js';

type Json = Record<string, unknown>;
const sample = (name: string): string =>
  readFileSync(new URL(`../fixtures/ingest/grype/${name}`, import.meta.url), 'utf8');

let ctx: TestContext;
let keyA: string;
let keyB: string;
let image: string;
beforeAll(async () => {
  ({
    ctx,
    keys: [keyA, keyB],
  } = await setupWithKeys(fixture, [TENANT_A, TENANT_B]));
  const result = await ingestTexts(
    ctx.storage,
    { 'busybox.json': sample('grype-image-busybox-epss.json') },
    {
      provider: 'AWS',
      region: 'us-east-1',
    },
  );
  expect(result.problems).toEqual([]);
  image = result.files[0]!.assetId!;
});
afterAll(async () => ctx.close());

const linkOf = (assetId: string, key = keyA, app = ctx.app) =>
  app.inject({
    url: `/v1/tenant/assets/${encodeURIComponent(assetId)}/sbom`,
    headers: { authorization: `Bearer ${key}`, host: 'inventory.test:8443' },
  });
/** The path of a link (the tests talk to the app directly, whatever host the URL names). */
const pathOf = (url: string) => new URL(url).pathname;
const download = (url: string, app = ctx.app) => app.inject({ url: pathOf(url) });

describe('the SBOM link', () => {
  it('answers the vendor shape with a signed URL on this server, valid for an hour, never tagged or kept', async () => {
    const res = await linkOf(image);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json<{ data: { url: string }; meta: Json }>();
    expect(Object.keys(body)).toEqual(['data', 'meta']);
    expect(body.data.url).toMatch(/^http:\/\/inventory\.test:8443\/v1\/sbom\/[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(body.meta).toEqual({ fileSizeInBytes: expect.any(Number), expiresInSeconds: 3600 });
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers.etag).toBeUndefined();
    const again = await ctx.app.inject({
      url: `/v1/tenant/assets/${encodeURIComponent(image)}/sbom`,
      headers: { authorization: `Bearer ${keyA}`, 'if-none-match': '*' },
    });
    expect(again.statusCode).toBe(200);

    const file = await download(body.data.url);
    expect(file.statusCode, file.body).toBe(200);
    expect(file.headers['content-type']).toBe('application/vnd.cyclonedx+json; version=1.6');
    expect(file.headers['content-disposition']).toMatch(/^attachment; filename="[A-Za-z0-9._-]+\.cdx\.json"$/);
    expect(file.rawPayload.length).toBe(body.meta.fileSizeInBytes);
  });

  it('downloads a CycloneDX 1.6 document that validates and lists the packages and findings of the scan', async () => {
    const file = await download((await linkOf(image)).json<{ data: { url: string } }>().data.url);
    const validator = new Validation.JsonStrictValidator(Spec.Version.v1dot6);
    expect(await validator.validate(file.body)).toBeNull();

    const bom = file.json<{
      bomFormat: string;
      specVersion: string;
      serialNumber: string;
      metadata: { component: Json };
      components: { 'bom-ref': string; name: string; version?: string; purl?: string }[];
      vulnerabilities: { id: string; ratings: Json[]; affects: { ref: string }[] }[];
    }>();
    expect(bom).toMatchObject({ bomFormat: 'CycloneDX', specVersion: '1.6' });
    expect(bom.serialNumber).toMatch(/^urn:uuid:[0-9a-f-]{36}$/);
    expect(bom.metadata.component).toMatchObject({ type: 'container', 'bom-ref': image });

    const findings = (
      await ctx.app.inject({
        url: `/v1/tenant/vulnerabilities?assetIds=${encodeURIComponent(image)}&perPage=2000`,
        headers: { authorization: `Bearer ${keyA}` },
      })
    ).json<{ data: { vulnerabilityId: string; packages: { packageName: string; installedVersion: string }[] }[] }>()
      .data;
    expect(findings.length).toBeGreaterThan(0);
    expect(bom.vulnerabilities.map((v) => v.id).sort()).toEqual(findings.map((f) => f.vulnerabilityId).sort());
    const packages = new Set(findings.flatMap((f) => f.packages.map((p) => `${p.packageName}@${p.installedVersion}`)));
    expect(new Set(bom.components.map((c) => `${c.name}@${c.version}`))).toEqual(packages);
    // Grype gives a purl for every package of this report.
    expect(bom.components.every((c) => c.purl?.startsWith('pkg:') && c['bom-ref'] === c.purl)).toBe(true);
    const refs = new Set(bom.components.map((c) => c['bom-ref']));
    for (const v of bom.vulnerabilities) {
      expect(v.affects.length).toBeGreaterThan(0);
      expect(v.affects.every((a) => refs.has(a.ref))).toBe(true);
      expect(v.ratings).toHaveLength(1);
    }
  });

  it('is built from the findings of an imported asset too, for ids holding `/` raw or encoded', async () => {
    const raw = await ctx.app.inject({
      url: `/v1/tenant/assets/${A2}/sbom`,
      headers: { authorization: `Bearer ${keyA}` },
    });
    expect(raw.statusCode, raw.body).toBe(200);
    expect(raw.headers['cache-control']).toBe('no-store');
    const encoded = await linkOf(A2);
    expect(encoded.statusCode, encoded.body).toBe(200);
    const bom = (await download(encoded.json<{ data: { url: string } }>().data.url)).json<Json>();
    expect(bom.components).toEqual([
      expect.objectContaining({ type: 'library', name: 'lodash', 'bom-ref': 'package-1' }),
    ]);
    expect((bom.metadata as { component: Json }).component).toMatchObject({ type: 'platform', 'bom-ref': A2 });
    // The asset itself is still served at its own path.
    const asset = await ctx.app.inject({
      url: `/v1/tenant/assets/${A2}`,
      headers: { authorization: `Bearer ${keyA}` },
    });
    expect(asset.json<{ data: Json }>().data.id).toBe(A2);
  });
});

describe('bad requests', () => {
  const errorOf = (res: { statusCode: number; json: <T>() => T }) => ({
    status: res.statusCode,
    codes: res.json<{ errors: { code: string }[] }>().errors.map((e) => e.code),
  });

  it('an asset of another tenant is answered exactly like a missing one (404)', async () => {
    const foreign = await linkOf(image, keyB);
    const missing = await linkOf('sirn:assets:nothing-here', keyB);
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json()).toEqual(missing.json());
  });

  it('an asset with no known package is 404 with a message that says so', async () => {
    const res = await linkOf(A5);
    expect(res.statusCode).toBe(404);
    expect(res.json<{ errors: { message: string }[] }>().errors[0]!.message).toMatch(/no package is known/);
    // A1's fixture findings name no package either.
    expect((await linkOf(A1)).statusCode).toBe(404);
  });

  it('unknown parameters are 400, other methods 405, a missing key 401', async () => {
    const res = await ctx.app.inject({
      url: `/v1/tenant/assets/${encodeURIComponent(image)}/sbom?format=xml`,
      headers: { authorization: `Bearer ${keyA}` },
    });
    expect(errorOf(res)).toEqual({ status: 400, codes: ['unknown_parameter'] });
    const post = await ctx.app.inject({ method: 'POST', url: `/v1/tenant/assets/${encodeURIComponent(image)}/sbom` });
    expect(post.statusCode).toBe(405);
    expect((await ctx.app.inject({ url: `/v1/tenant/assets/${encodeURIComponent(image)}/sbom` })).statusCode).toBe(401);
  });

  it('an altered, truncated or foreign-looking link is 403 in the error shape', async () => {
    const url = (await linkOf(image)).json<{ data: { url: string } }>().data.url;
    const path = pathOf(url);
    const [body, mac] = path.slice('/v1/sbom/'.length).split('.') as [string, string];
    const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
    for (const token of [
      `${flip(body, 3)}.${mac}`,
      `${body}.${flip(mac, 0)}`,
      `${body}.${mac.slice(0, -1)}`,
      body,
      `${body}.${mac}.x`,
      'not-a-token',
    ]) {
      const res = await ctx.app.inject({ url: `/v1/sbom/${token}` });
      expect(errorOf(res), token).toEqual({ status: 403, codes: ['forbidden'] });
    }
    // A cursor of the same server is not a download token.
    const cursor = (
      await ctx.app.inject({ url: '/v1/tenant/risks?perPage=1', headers: { authorization: `Bearer ${keyA}` } })
    ).json<{ meta: { cursor: string | null } }>().meta.cursor;
    if (cursor) expect((await ctx.app.inject({ url: `/v1/sbom/${cursor}` })).statusCode).toBe(403);
  });

  it('a link stops working when it expires, and when its key is revoked', async () => {
    let clock = Date.now();
    const app = await buildApp({ storage: ctx.apiStorage, now: () => new Date(clock) });
    try {
      const key = await createKey(ctx.storage, TENANT_A);
      const url = (await linkOf(image, key, app)).json<{ data: { url: string } }>().data.url;
      expect((await download(url, app)).statusCode).toBe(200);
      clock += 3599_000;
      expect((await download(url, app)).statusCode).toBe(200);
      clock += 1_000;
      const expired = await download(url, app);
      expect(expired.statusCode).toBe(403);
      expect(expired.json<{ errors: { message: string }[] }>().errors[0]!.message).toMatch(/expired/);

      clock = Date.now();
      const fresh = (await linkOf(image, key, app)).json<{ data: { url: string } }>().data.url;
      const [info] = (await ctx.storage.listKeys(TENANT_A)).filter((k) => key.startsWith(k.prefix));
      expect(await ctx.storage.revokeKey(info!.id, new Date().toISOString())).toBe(true);
      const revoked = await download(fresh, app);
      expect(revoked.statusCode).toBe(403);
      expect(revoked.json<{ errors: { message: string }[] }>().errors[0]!.message).toMatch(/no longer valid/);
    } finally {
      await app.close();
    }
  });
});

it('names the configured public URL, and no log line holds a link token', async () => {
  const stream = new PassThrough();
  let output = '';
  stream.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const app = await buildApp({
    storage: ctx.apiStorage,
    logger: { level: 'info', stream },
    http: { publicUrl: 'https://secinv.example.com/base' },
  });
  try {
    const url = (await linkOf(image, keyA, app)).json<{ data: { url: string } }>().data.url;
    expect(url.startsWith('https://secinv.example.com/base/v1/sbom/')).toBe(true);
    const token = url.split('/').pop()!;
    expect((await app.inject({ url: `/v1/sbom/${token}` })).statusCode).toBe(200);
    expect(output).toContain('/v1/sbom/<token>');
    expect(output).not.toContain(token.split('.')[0]!);
  } finally {
    await app.close();
  }
});
