// Trivy reports into the inventory, end to end on a real database of each dialect: the sample reports become image
// assets and findings the API serves; re-scans keep firstObservedAt, resolve what they no longer list, and change
// nothing when repeated; --asset attaches a scan to an existing asset; bad input writes nothing.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { IngestOptions, IngestResult } from '../../src/ingest/ingest.js';
import { A1 } from '../fixtures.js';
import { TENANT_A, TENANT_B } from '../helpers.js';
import { ingestSuite } from './suite.js';

const sample = (name: string): string =>
  readFileSync(new URL(`../fixtures/ingest/trivy/${name}`, import.meta.url), 'utf8');
const TEAMDOJO = sample('trivy-image-teamdojo-multi-target.json');
const ALL_STATUSES = sample('trivy-image-example-app-all-statuses.json');

type Json = Record<string, unknown>;

const suite = ingestSuite();
const { api } = suite;
const ingest = (files: Record<string, string>, options: Partial<IngestOptions> = {}): Promise<IngestResult> =>
  suite.ingest(files, { provider: 'AWS', region: 'us-east-1', ...options });
const asset = async (id: string, tenantId = TENANT_A) =>
  (await api(`/v1/tenant/assets/${encodeURIComponent(id)}?include=rawData`, tenantId)).data as Json;
const findings = async (assetId: string, tenantId = TENANT_A) =>
  (
    (
      await api(
        `/v1/tenant/vulnerabilities?assetIds=${encodeURIComponent(assetId)}&perPage=2000&sortBy=firstObservedAt`,
        tenantId,
      )
    ).data as Json[]
  ).sort((a, b) => String(a.vulnerabilityId).localeCompare(String(b.vulnerabilityId)));

const idOf = (result: IngestResult, file: string): string => {
  expect(result.problems).toEqual([]);
  const found = result.files.find((f) => f.file === file);
  if (!found?.assetId) throw new Error(`${file} was not ingested onto an asset`);
  return found.assetId;
};

describe('a Trivy image report', () => {
  it('becomes an image asset with one finding per vulnerability and its packages', async () => {
    const result = await ingest({ 'teamdojo.json': TEAMDOJO });
    const id = idOf(result, 'teamdojo.json');
    expect(id).toBe(`sirn:assets:${TENANT_A}:aws:ecr:image:us-east-1:teamdojo:latest`);
    expect(result.files[0]).toMatchObject({ format: 'trivy', assetCreated: true, added: 5, updated: 0, resolved: 0 });
    const image = await asset(id);
    expect(image).toMatchObject({
      name: 'teamdojo:latest',
      provider: 'AWS',
      type: 'AWS::ECR::Image',
      service: 'AWS::ECR',
      region: 'us-east-1',
      firstObservedAt: '2026-11-01T10:00:00.000Z',
      lastScannedAt: '2026-11-01T10:00:00.000Z',
      isVulnerable: true,
      operatingSystem: [{ name: 'alpine', version: '3.9.4', architecture: null, platform: null }],
    });
    const list = await findings(id);
    expect(list).toHaveLength(5);
    const freetype = list.find((f) => f.vulnerabilityId === 'CVE-2020-15999') as Json;
    // nvd UI:R (2.835) and redhat UI:N (3.887): the larger counts.
    expect(freetype).toMatchObject({
      severityLevel: 'MEDIUM',
      severitySource: 'nvd',
      isExploitable: true,
      hasVendorFix: true,
      assetType: 'AWS::ECR::Image',
    });
    expect(freetype.packages).toEqual([
      {
        packageName: 'freetype',
        installedVersion: '2.9.1-r2',
        fixedVersion: '2.9.1-r3',
        targetName: 'teamdojo:latest (alpine 3.9.4)',
        targetType: 'alpine',
        targetPath: 'app/libs/freetype-2.9.1-r2',
        targetClass: 'os-pkgs',
      },
    ]);
    expect(freetype.cwes).toEqual([
      {
        id: 'CWE-787',
        cweId: '787',
        name: null,
        source: 'nvd',
        sourceUrl: 'https://cwe.mitre.org/data/definitions/787.html',
        description: null,
      },
    ]);
    expect(image.numberOfMediumVulnerabilities).toBe(list.filter((f) => f.severityLevel === 'MEDIUM').length);
  });

  it('ingested again changes nothing, even without a scan time of its own', async () => {
    const id = `sirn:assets:${TENANT_A}:aws:ecr:image:us-east-1:teamdojo:latest`;
    const before = [await asset(id), await findings(id)];
    const tag = await suite.etag('/v1/tenant/vulnerabilities');
    const again = await ingest({ 'teamdojo.json': TEAMDOJO }, { now: () => new Date('2026-11-05T00:00:00Z') });
    expect(again.files[0]).toMatchObject({
      assetCreated: false,
      assetUnchanged: true,
      added: 0,
      updated: 0,
      unchanged: 5,
      resolved: 0,
    });
    expect([await asset(id), await findings(id)]).toEqual(before);
    // Nothing was written, so the tenant's data version did not move: a client's tags stay valid.
    expect(await suite.etag('/v1/tenant/vulnerabilities')).toBe(tag);
  });

  it('a report of the same time that differs is compared finding by finding: only what differs is written', async () => {
    const id = `sirn:assets:${TENANT_A}:aws:ecr:image:us-east-1:teamdojo:latest`;
    const report = JSON.parse(TEAMDOJO) as Json & { Results: { Vulnerabilities?: Json[] }[] };
    const vulnerabilities = report.Results.flatMap((r) => r.Vulnerabilities ?? []);
    const ids = [...new Set(vulnerabilities.map((v) => String(v.VulnerabilityID)))].sort();
    // Each change reaches a different part of what is stored: the document, a package's purl (its row only), the
    // aliases (their rows only).
    const changes: [string, (v: Json) => void][] = [
      ['title', (v) => (v.Title = 'another title')],
      ['purl', (v) => (v.PkgIdentifier = { PURL: 'pkg:apk/alpine/changed@1.0' })],
      ['alias', (v) => (v.VendorIDs = ['GHSA-aaaa-bbbb-cccc'])],
    ];
    for (const [what, change] of changes) {
      const tag = await suite.etag('/v1/tenant/vulnerabilities');
      const changed = structuredClone(report);
      const target = ids[changes.findIndex(([name]) => name === what)] as string;
      for (const r of changed.Results)
        for (const v of r.Vulnerabilities ?? []) if (v.VulnerabilityID === target) change(v);
      const result = await ingest({ [`${what}.json`]: JSON.stringify(changed) });
      expect(result.files[0], what).toMatchObject({ assetUnchanged: false, added: 0, updated: 1, unchanged: 4 });
      expect(await suite.etag('/v1/tenant/vulnerabilities'), what).not.toBe(tag);
      // The report as it was, again: the one finding it changed is written back; the rest stay as they are.
      const back = await ingest({ 'teamdojo.json': TEAMDOJO });
      expect(back.files[0], what).toMatchObject({ added: 0, updated: 1, unchanged: 4 });
    }
    const list = await findings(id);
    expect(list.map((f) => f.title)).not.toContain('another title');
  });

  it('two scans of one image in one run: the second finds what the first wrote', async () => {
    const report = { ...(JSON.parse(TEAMDOJO) as Json), ArtifactName: 'teamdojo:twice' };
    // --no-resolve: resolving writes what the run holds of the asset first, which would hide a read of older rows.
    const files = {
      'january.json': JSON.stringify({ ...report, CreatedAt: '2026-01-01T00:00:00Z' }),
      'february.json': JSON.stringify({ ...report, CreatedAt: '2026-02-01T00:00:00Z' }),
    };
    const result = await ingest(files, { resolve: false });
    expect(result.files.map((f) => [f.assetCreated, f.added, f.updated])).toEqual([
      [true, 5, 0],
      [false, 0, 5],
    ]);
    const id = idOf(result, 'february.json');
    for (const f of await findings(id))
      expect([f.firstObservedAt, f.lastObservedAt]).toEqual(['2026-01-01T00:00:00.000Z', '2026-02-01T00:00:00.000Z']);
    expect(await asset(id)).toMatchObject({
      firstObservedAt: '2026-01-01T00:00:00.000Z',
      lastScannedAt: '2026-02-01T00:00:00.000Z',
    });
  });

  it('two files of one run: the second is compared with what the first wrote, not with what was stored before', async () => {
    const id = `sirn:assets:${TENANT_A}:aws:ecr:image:us-east-1:teamdojo:latest`;
    const report = JSON.parse(TEAMDOJO) as Json & { Results: { Vulnerabilities?: Json[] }[] };
    const changed = structuredClone(report);
    for (const r of changed.Results) for (const v of r.Vulnerabilities ?? []) v.Title = 'a title of the first file';
    const result = await ingest({ 'changed.json': JSON.stringify(changed), 'teamdojo.json': TEAMDOJO });
    expect(result.files.map((f) => [f.updated, f.unchanged])).toEqual([
      [5, 0],
      [5, 0],
    ]);
    expect((await findings(id)).map((f) => f.title)).not.toContain('a title of the first file');
  });

  it('a later scan keeps firstObservedAt; one that lists less resolves the rest, unless told not to', async () => {
    const report = JSON.parse(ALL_STATUSES) as Json & { Results: { Vulnerabilities: Json[] }[] };
    const id = idOf(await ingest({ 'app.json': ALL_STATUSES }), 'app.json');
    const first = await findings(id);
    expect(first).toHaveLength(new Set(report.Results[0]?.Vulnerabilities.map((v) => v.VulnerabilityID)).size);

    const later = structuredClone(report);
    later.CreatedAt = '2024-02-01T00:00:00Z';
    const dropped = later.Results[0]!.Vulnerabilities.splice(0, 3).map((v) => String(v.VulnerabilityID));
    const partial = await ingest({ 'later.json': JSON.stringify(later) }, { resolve: false });
    expect(partial.files[0]).toMatchObject({ resolved: 0 });
    expect(await findings(id)).toHaveLength(first.length);

    const stored = await suite.documents();
    const rescan = await ingest({ 'later.json': JSON.stringify(later) });
    expect(rescan.files[0]).toMatchObject({ added: 0, resolved: 3 });
    // A resolved finding takes its document along; every other finding keeps exactly one.
    expect(await suite.documents()).toEqual({
      findings: stored.findings - 3,
      documents: stored.documents - 3,
      orphans: 0,
    });
    expect(stored.documents).toBe(stored.findings);
    const now = await findings(id);
    expect(now.map((f) => f.vulnerabilityId)).toEqual(
      first.map((f) => f.vulnerabilityId).filter((v) => !dropped.includes(String(v))),
    );
    for (const f of now) {
      expect(f.firstObservedAt).toBe('2024-01-15T08:58:29.827Z');
      expect(f.lastObservedAt).toBe('2024-02-01T00:00:00.000Z');
    }
    expect(await asset(id)).toMatchObject({
      firstObservedAt: '2024-01-15T08:58:29.827Z',
      lastScannedAt: '2024-02-01T00:00:00.000Z',
    });

    // Without Results the report names its image only in ArtifactName (this one left it empty).
    const empty = {
      ...later,
      ArtifactName: 'noppaknopsta/example-app:main-159',
      CreatedAt: '2024-03-01T00:00:00Z',
      Results: [],
    };
    expect((await ingest({ 'empty.json': JSON.stringify(empty) })).files[0]).toMatchObject({ resolved: now.length });
    expect(await findings(id)).toEqual([]);
    expect(await asset(id)).toMatchObject({ isVulnerable: false, vulnerabilityScore: 0 });
  });
});

describe('an image on a cloud registry, with secrets', () => {
  const REPORT = readFileSync(new URL('../fixtures/ingest-own/trivy-image-secrets.json', import.meta.url), 'utf8');

  it('takes provider, region and account from the registry, and fills the secret arrays', async () => {
    const id = idOf(await ingest({ 'ecr.json': REPORT }, { provider: undefined, region: undefined }), 'ecr.json');
    expect(id).toBe(
      `sirn:assets:${TENANT_A}:aws:ecr:image:eu-west-1:123456789012.dkr.ecr.eu-west-1.amazonaws.com/payments/api@sha256:${'2'.repeat(64)}`,
    );
    const image = await asset(id);
    expect(image).toMatchObject({
      provider: 'AWS',
      region: 'eu-west-1',
      providerAccountId: 123456789012,
      resourceName: '123456789012.dkr.ecr.eu-west-1.amazonaws.com/payments/api:1.4.2',
      imageId: `sha256:${'1'.repeat(64)}`,
      platform: 'linux',
      numberOfCriticalSecrets: 2,
      numberOfHighSecrets: 0,
      numberOfMediumSecrets: 1,
      numberOfLowSecrets: 1,
      lastScannedAt: '2026-10-02T08:00:00.123Z',
    });
    expect((image.criticalSecrets as Json[])[0]).toEqual({
      ruleId: 'aws-access-key-id',
      category: 'AWS',
      title: 'AWS Access Key ID',
      target: '/app/config/.env',
      startLine: 3,
      endLine: 3,
      source: 'trivy',
    });
    // The build history is left out of rawData.
    expect(JSON.stringify(image.rawData)).not.toContain('history');
  });

  it('merges one vulnerability across packages and Results, at its highest severity', async () => {
    const id = `sirn:assets:${TENANT_A}:aws:ecr:image:eu-west-1:123456789012.dkr.ecr.eu-west-1.amazonaws.com/payments/api@sha256:${'2'.repeat(64)}`;
    const [finding] = await findings(id);
    expect(finding).toMatchObject({
      vulnerabilityId: 'CVE-2024-0727',
      severityLevel: 'HIGH',
      title: 'CVE-2024-0727',
      isExploitable: true,
      hasVendorFix: true,
    });
    expect((finding?.packages as Json[]).map((p) => [p.packageName, p.targetClass, p.targetPath])).toEqual([
      ['libcrypto3', 'os-pkgs', '123456789012.dkr.ecr.eu-west-1.amazonaws.com/payments/api:1.4.2 (alpine 3.19.1)'],
      ['libssl3', 'os-pkgs', '123456789012.dkr.ecr.eu-west-1.amazonaws.com/payments/api:1.4.2 (alpine 3.19.1)'],
      ['openssl-wasm', 'lang-pkgs', 'app/node_modules/openssl-wasm/package.json'],
    ]);
  });
});

describe('--asset', () => {
  it('attaches a file-system scan to an existing asset, changing only what a scan observes', async () => {
    const before = await asset(A1);
    const repo = sample('trivy-repo-npm.json');
    expect((await ingest({ 'repo.json': repo })).problems).toEqual([
      {
        file: 'repo.json',
        path: null,
        message: 'this is a Trivy repository scan, which names no asset: give --asset ASSET_ID',
      },
    ]);
    const result = await ingest({ 'repo.json': repo }, { assetId: A1 });
    expect(result.files[0]).toMatchObject({ assetId: A1, assetCreated: false, added: 1 });
    const after = await asset(A1);
    expect(after).toMatchObject({
      name: before.name,
      type: before.type,
      tags: before.tags,
      firstObservedAt: before.firstObservedAt,
      lastScannedAt: '2021-08-25T12:20:30.000Z',
    });
    expect((after.rawData as Json).Owner).toBe((before.rawData as Json).Owner);
    expect(after.integrationId).toBe(before.integrationId);
    expect((await findings(A1)).some((f) => (f.packages as Json[])[0]?.targetName === 'package-lock.json')).toBe(true);
  });

  it('with --integration, the asset and the findings of the scan take it', async () => {
    const integrationId = '3a1c7e52-9b0d-4f6e-8a2b-5c4d3e2f1a0b';
    expect((await asset(A1)).integrationId).not.toBe(integrationId);
    const result = await ingest({ 'repo.json': sample('trivy-repo-npm.json') }, { assetId: A1, integrationId });
    expect(result.problems).toEqual([]);
    expect(await asset(A1)).toMatchObject({ integrationId });
    const scanned = (await findings(A1)).filter((f) => (f.packages as Json[])[0]?.targetName === 'package-lock.json');
    expect(scanned.map((f) => f.integrationId)).toEqual([integrationId]);
  });

  it("must name an asset of the tenant: another tenant's is unknown", async () => {
    const result = await ingest({ 'repo.json': sample('trivy-repo-npm.json') }, { assetId: 'sirn:assets:nope' });
    expect(result.problems).toEqual([
      { file: 'repo.json', path: null, message: `--asset: tenant ${TENANT_A} has no asset 'sirn:assets:nope'` },
    ]);
    const b = (await api('/v1/tenant/assets?perPage=1', TENANT_B)).data as Json[];
    const foreign = await ingest(
      { 'repo.json': sample('trivy-repo-npm.json') },
      { assetId: String(b[0]?.id) + '-not-in-a' },
    );
    expect(foreign.problems[0]?.message).toContain('has no asset');
  });
});

describe('tenants and bad input', () => {
  it('an ingest into one tenant leaves the other as it was', async () => {
    const before = await api('/v1/tenant/vulnerabilities?perPage=2000', TENANT_B);
    await ingest({ 'teamdojo.json': TEAMDOJO });
    expect(await api('/v1/tenant/vulnerabilities?perPage=2000', TENANT_B)).toEqual(before);
  });

  it('a truncated report, another format or a feed is refused with its reason, and nothing of the run is written', async () => {
    const total = async () => ((await api('/v1/tenant/assets?perPage=1')).meta as Json).total;
    const count = await total();
    const cut = ALL_STATUSES.slice(0, ALL_STATUSES.indexOf('"VulnerabilityID"', 3000) + 10);
    const prowlerCsv = readFileSync(new URL('../fixtures/ingest/assets/prowler-csv-aws.csv', import.meta.url), 'utf8');
    const result = await ingest({
      'new.json': JSON.stringify({ ...JSON.parse(TEAMDOJO), ArtifactName: 'other:1' }),
      'cut.json': cut,
      'prowler.csv': prowlerCsv,
    });
    expect(result.files).toEqual([]);
    expect(result.problems.map((p) => `${p.file}: ${p.message}`)).toEqual([
      expect.stringMatching(
        /^cut\.json: ends before the JSON is complete \(truncated\?\), inside \$\.Results\[0\]\.Vulnerabilities\[\d+\]/,
      ),
      'prowler.csv: is Prowler CSV output, which is not supported: run prowler with `--output-formats json-ocsf`',
    ]);
    expect(await total()).toBe(count);
  });

  it('--integration puts a UUID on the asset and its findings; another id is refused before anything is read', async () => {
    const integrationId = '3a1c7e52-9b0d-4f6e-8a2b-5c4d3e2f1a0b';
    const id = idOf(await ingest({ 'teamdojo.json': TEAMDOJO }, { integrationId }), 'teamdojo.json');
    expect(await asset(id)).toMatchObject({ integrationId });
    expect((await findings(id)).map((f) => f.integrationId)).toEqual(Array(5).fill(integrationId));
    await expect(ingest({ 'other.json': TEAMDOJO }, { integrationId: 'aws-prod' })).rejects.toThrow(
      "--integration must be a UUID, not 'aws-prod'",
    );
  });

  it('an unknown tenant is refused', async () => {
    await expect(ingest({ 'teamdojo.json': TEAMDOJO }, { tenantId: 'no-such-tenant' })).rejects.toThrow(
      "unknown tenant 'no-such-tenant'",
    );
  });
});
