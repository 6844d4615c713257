// Grype reports into the inventory on a real database of each dialect: image assets, one finding per vulnerability
// with its packages merged, exploitability through related vulnerabilities, directory scans attached with --asset.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IngestOptions, IngestResult } from '../../src/ingest/ingest.js';
import { A2, fixture } from '../fixtures.js';
import { setupWithKeys, TENANT_A, type TestContext } from '../helpers.js';
import { ingestTexts } from './run.js';

const sample = (name: string): string =>
  readFileSync(new URL(`../fixtures/ingest/grype/${name}`, import.meta.url), 'utf8');
type Json = Record<string, unknown>;

let ctx: TestContext;
let key: string;
beforeAll(async () => {
  ({
    ctx,
    keys: [key],
  } = await setupWithKeys(fixture, [TENANT_A]));
});
afterAll(async () => ctx.close());

const ingest = (files: Record<string, string>, options: Partial<IngestOptions> = {}): Promise<IngestResult> =>
  ingestTexts(ctx.storage, files, { provider: 'Azure', ...options });
const findings = async (assetId: string): Promise<Json[]> => {
  const res = await ctx.app.inject({
    url: `/v1/tenant/vulnerabilities?assetIds=${encodeURIComponent(assetId)}&perPage=2000`,
    headers: { authorization: `Bearer ${key}` },
  });
  return res
    .json<{ data: Json[] }>()
    .data.sort((a, b) => String(a.vulnerabilityId).localeCompare(String(b.vulnerabilityId)));
};
const assetOf = (result: IngestResult): string => {
  expect(result.problems).toEqual([]);
  return result.files[0]?.assetId ?? '';
};

describe('a Grype image report', () => {
  it('becomes an image asset named by its digest, with its matches as findings', async () => {
    const id = assetOf(await ingest({ 'busybox.json': sample('grype-image-busybox-epss.json') }));
    expect(id).toBe(
      `sirn:assets:${TENANT_A}:azure:containerregistry:image:global:busybox@sha256:ae39a6f5c07297d7ab64dbd4f82c77c874cc6a94cea29fdec309d0992574b4f7`,
    );
    const list = await findings(id);
    expect(list).toHaveLength(15);
    const fixed = list.find((f) => f.vulnerabilityId === 'CVE-2021-42376') as Json;
    expect(fixed).toMatchObject({
      severityLevel: 'MEDIUM',
      hasVendorFix: true,
      firstObservedAt: '2025-06-19T11:43:35.523Z',
      assetType: 'Azure::ContainerRegistry::Image',
    });
    expect((fixed.packages as Json[])[0]).toMatchObject({
      packageName: 'busybox',
      installedVersion: '1.32.1',
      fixedVersion: '1.34.0',
      targetName: 'busybox:1.32.1',
      targetType: 'binary',
      targetClass: 'lang-pkgs',
    });
    // AV:L/AC:H/PR:L/UI:N is 1.048: exploitable, though a rounded score shows 1.0 or 1.1.
    expect(list.find((f) => f.vulnerabilityId === 'CVE-2021-42374')?.isExploitable).toBe(true);
  });

  it('one vulnerability matched at two paths is one finding with one package, at the first path', async () => {
    const id = assetOf(await ingest({ 'two.json': sample('grype-image-same-cve-two-paths.json') }));
    const list = await findings(id);
    expect(list.map((f) => f.vulnerabilityId)).toEqual(['CVE-2021-33574']);
    expect(list[0]?.packages).toEqual([
      {
        packageName: 'libc6',
        installedVersion: '2.28-10',
        fixedVersion: null,
        targetName: 'test-image:latest',
        targetType: 'debian',
        targetPath: '/usr/lib/x86_64-linux-gnu/libc.so.6',
        targetClass: 'os-pkgs',
      },
    ]);
    expect(list[0]).toMatchObject({ severityLevel: 'CRITICAL', hasVendorFix: false });
  });

  it('keeps GHSA ids, and reads exploitability from related vulnerabilities when the match has no vector', async () => {
    const id = assetOf(await ingest({ 'ruby.json': sample('grype-image-chainguard-ruby.json') }));
    const list = await findings(id);
    expect(list.map((f) => f.vulnerabilityId)).toEqual(['CVE-2023-28755', 'GHSA-hv5j-3h9f-99c2']);
    expect(list.map((f) => f.isExploitable)).toEqual([true, true]);
    expect((list[0]?.packages as Json[])[0]).toMatchObject({ targetType: 'wolfi', targetClass: 'os-pkgs' });
    // The GHSA's own description, one short sentence, is its title too.
    expect(list[1]).toMatchObject({
      title: 'Ruby URI component ReDoS issue',
      description: 'Ruby URI component ReDoS issue',
    });
  });
});

describe('a Grype directory report', () => {
  it('needs --asset, and then attaches to that asset', async () => {
    const report = sample('grype-dir-v024.json');
    expect((await ingest({ 'dir.json': report })).problems[0]?.message).toBe(
      'this is a Grype directory scan, which names no asset: give --asset ASSET_ID',
    );
    const result = await ingest({ 'dir.json': report }, { assetId: A2 });
    expect(result.files[0]).toMatchObject({ assetId: A2, assetCreated: false });
    const parsed = JSON.parse(report) as { source: { target: string }; matches: { vulnerability: { id: string } }[] };
    const ours = (await findings(A2)).filter((f) => (f.packages as Json[])[0]?.targetName === parsed.source.target);
    expect(ours.length).toBeGreaterThan(0);
    expect(ours.length).toBe(new Set(parsed.matches.map((m) => m.vulnerability.id)).size);
  });

  it('a report whose descriptor is not grype is refused', async () => {
    const forged = JSON.stringify({
      ...(JSON.parse(sample('grype-image-same-cve-two-paths.json')) as object),
      descriptor: { name: 'syft' },
    });
    expect((await ingest({ 'forged.json': forged })).problems).toEqual([
      { file: 'forged.json', path: '$.descriptor.name', message: 'must be "grype" in a Grype report, not "syft"' },
    ]);
  });
});
