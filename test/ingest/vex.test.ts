// CycloneDX and OpenVEX into the inventory on a real database of each dialect: SBOM vulnerabilities become findings
// on the document's asset; VEX statements become exemptions on the assets whose packages or image they name, whatever
// the order of the VEX document and the scan; statements that match nothing create nothing and say so.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IngestOptions, IngestResult } from '../../src/ingest/ingest.js';
import { A1, A2, A3, fixture } from '../fixtures.js';
import { setupWithKeys, TENANT_A, TENANT_B, type TestContext } from '../helpers.js';
import { ingestTexts } from './run.js';

const sample = (path: string): string => readFileSync(new URL(`../fixtures/ingest/${path}`, import.meta.url), 'utf8');
const own = (name: string): string => readFileSync(new URL(`../fixtures/ingest-own/${name}`, import.meta.url), 'utf8');
type Json = Record<string, unknown>;

let ctx: TestContext;
let key: string;
let keyB: string;
beforeAll(async () => {
  ({
    ctx,
    keys: [key, keyB],
  } = await setupWithKeys(fixture, [TENANT_A, TENANT_B]));
});
afterAll(async () => ctx.close());

const ingest = (files: Record<string, string>, options: Partial<IngestOptions> = {}): Promise<IngestResult> =>
  ingestTexts(ctx.storage, files, options);
const ok = async (files: Record<string, string>, options: Partial<IngestOptions> = {}) => {
  const result = await ingest(files, options);
  expect(result.problems).toEqual([]);
  return result.files;
};
async function api(path: string, bearer = key): Promise<Json> {
  const res = await ctx.app.inject({ url: path, headers: { authorization: `Bearer ${bearer}` } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<Json>();
}
/** The asset's findings, exempted ones included (the list shows one or the other). */
const findings = async (assetId: string, bearer = key): Promise<Json[]> => {
  const list = async (exempted: boolean) =>
    (
      await api(
        `/v1/tenant/vulnerabilities?assetIds=${encodeURIComponent(assetId)}&perPage=2000&isExempted=${exempted}`,
        bearer,
      )
    ).data as Json[];
  return [...(await list(false)), ...(await list(true))].sort((a, b) =>
    String(a.vulnerabilityId).localeCompare(String(b.vulnerabilityId)),
  );
};
const finding = async (assetId: string, id: string): Promise<Json> => {
  const found = (await findings(assetId)).find((f) => f.vulnerabilityId === id);
  expect(found, `${assetId} ${id}`).toBeDefined();
  return found as Json;
};
const exemptionIds = (f: Json) => (f.exemptions as { exemptionId: string }[]).map((e) => e.exemptionId);

describe('a CycloneDX SBOM with vulnerabilities', () => {
  it("becomes findings on the asset given, with the components' packages and the rating of the entry's source", async () => {
    const [file] = await ok(
      { 'npm.cdx.json': sample('cyclonedx/cdx-sbom-1.7-trivy-npm-with-vulns.json') },
      { assetId: A2 },
    );
    expect(file).toMatchObject({ format: 'cyclonedx', assetId: A2, assetCreated: false, added: 1 });
    expect(await finding(A2, 'CVE-2019-11358')).toMatchObject({
      severityLevel: 'MEDIUM',
      severitySource: 'ghsa',
      firstObservedAt: '2021-08-25T12:20:30.000Z',
      packages: [
        {
          packageName: 'jquery',
          installedVersion: '3.3.9',
          fixedVersion: null,
          targetName: 'testdata/fixtures/repo/npm',
          targetType: 'npm',
          targetPath: null,
          targetClass: 'lang-pkgs',
        },
      ],
    });
  });

  it('in_triage entries are findings: CVSS v3.1 vectors decide isExploitable, Maven names carry their group', async () => {
    await ok({ 'log4j.cdx.json': sample('cyclonedx/cdx-1.4-log4j-in-triage.json') }, { assetId: A3 });
    const list = await findings(A3);
    expect(list.map((f) => f.vulnerabilityId)).toContain('CVE-2021-44228');
    expect(list).toHaveLength(8);
    expect(await finding(A3, 'CVE-2021-44228')).toMatchObject({
      severityLevel: 'CRITICAL',
      isExploitable: true,
      primaryUrl: 'http://cve.mitre.org/cgi-bin/cvename.cgi?name=CVE-2021-44228',
      packages: [{ packageName: 'org.apache.logging.log4j:log4j-core', installedVersion: '2.13.2', targetType: 'jar' }],
    });
    // AV:N/AC:H/PR:H/UI:N: 8.22 × 0.85 × 0.44 × 0.27 × 0.85 = 0.70, not above 1.0.
    expect(await finding(A3, 'CVE-2021-44832')).toMatchObject({ isExploitable: false, severityLevel: 'MEDIUM' });
  });

  it('a document with findings and no asset is refused, asking for --asset; nothing written', async () => {
    const result = await ingest({ 'log4j.cdx.json': sample('cyclonedx/cdx-1.4-log4j-in-triage.json') });
    expect(result.problems).toEqual([
      {
        file: 'log4j.cdx.json',
        path: null,
        message:
          'this is a CycloneDX document whose subject is not a container image, which names no asset: give --asset ASSET_ID',
      },
    ]);
  });
});

describe('VEX statements', () => {
  it("a statements-only document about other documents' products needs no asset and creates nothing, saying so", async () => {
    const [file] = await ok({ 'case8.json': sample('cyclonedx/cdx-vex-1.4-cisa-case8-bomlink.json') });
    expect(file).toMatchObject({
      assetId: null,
      vex: { documentId: 'case8.json', statements: 0, exemptions: 0, unmatched: 7 },
    });
    expect(await api('/v1/tenant/vulnerabilities?isExempted=true')).toMatchObject({ data: [] });
  });

  it("statements on the document's own subject apply to the asset given; its exploitable entry is a finding", async () => {
    const [file] = await ok({ 'acme.json': sample('cyclonedx/cdx-vex-1.4-justifications.json') }, { assetId: A1 });
    expect(file?.vex).toMatchObject({ statements: 2, exempting: 2, exemptions: 2, unmatched: 0 });
    expect(file).toMatchObject({ assetId: A1, added: 1 });
    const exploitable = await finding(A1, 'CVE-2020-35491');
    expect(exploitable).toMatchObject({ severityLevel: 'UNKNOWN', exemptions: [] });
  });

  it('OpenVEX: not_affected on a package purl and fixed on the image digest exempt; affected does not', async () => {
    const [scan] = await ok({ 'busybox.json': sample('grype/grype-image-busybox-epss.json') }, { provider: 'Azure' });
    const image = scan?.assetId ?? '';
    const before = (await api(`/v1/tenant/assets/${encodeURIComponent(image)}`)).data as Json;
    const [vex] = await ok({ 'busybox.vex.json': own('openvex-busybox.json') });
    expect(vex?.vex).toEqual({
      documentId: 'https://vex.example.org/busybox-2026-11',
      statements: 4,
      exempting: 3,
      exemptions: 2,
      unmatched: 1,
    });
    const notAffected = await finding(image, 'CVE-2021-42374');
    expect(notAffected.exemptions).toEqual([
      {
        exemptionId: expect.any(String),
        exemption: {
          name: 'https://vex.example.org/busybox-2026-11 · CVE-2021-42374',
          reason: 'vulnerable_code_not_in_execute_path: unlzma is not used in this image.',
          createdAt: '2026-11-02T09:00:00.000Z',
          updatedAt: '2026-11-02T09:00:00.000Z',
          rules: [
            {
              exemptionType: 'vex',
              vulnerabilityId: 'CVE-2021-42374',
              vulnerabilityIds: null,
              assetIds: [image],
              assetGroupIds: null,
              assetRegions: null,
              assetTags: null,
              noVendorFix: false,
            },
          ],
        },
      },
    ]);
    const fixed = await finding(image, 'CVE-2022-48174');
    expect(
      (fixed.exemptions as { exemption: { rules: Json[] } }[])[0]?.exemption.rules.map((r) => r.vulnerabilityId),
    ).toEqual(['CVE-2022-48174', 'GHSA-test-busy-box1']);
    expect(await finding(image, 'CVE-2021-42376')).toMatchObject({ exemptions: [] });
    // A version the image does not have matches nothing.
    expect(await finding(image, 'CVE-2021-28831')).toMatchObject({ exemptions: [] });
    // Exempted findings leave the asset's counts: one MEDIUM and the CRITICAL.
    const after = (await api(`/v1/tenant/assets/${encodeURIComponent(image)}`)).data as Json;
    expect(after.numberOfMediumVulnerabilities).toBe((before.numberOfMediumVulnerabilities as number) - 1);
    expect(after.numberOfCriticalVulnerabilities).toBe((before.numberOfCriticalVulnerabilities as number) - 1);
  });

  it('re-loading a document replaces its exemptions: the same file changes nothing, a changed one updates', async () => {
    const image = (
      (await api('/v1/tenant/vulnerabilities?vulnerabilityIds=CVE-2021-42374&isExempted=true')).data as Json[]
    )[0]?.assetId as string;
    const ids = exemptionIds(await finding(image, 'CVE-2021-42374'));
    await ok({ 'busybox.vex.json': own('openvex-busybox.json') });
    expect(exemptionIds(await finding(image, 'CVE-2021-42374'))).toEqual(ids);
    const changed = own('openvex-busybox.json').replace(
      '"status": "not_affected",\n      "justification": "vulnerable_code_not_in_execute_path"',
      '"status": "under_investigation"',
    );
    expect(changed).not.toBe(own('openvex-busybox.json'));
    const [file] = await ok({ 'busybox.vex.json': changed });
    expect(file?.vex).toMatchObject({ exempting: 2, exemptions: 1 });
    expect(await finding(image, 'CVE-2021-42374')).toMatchObject({ exemptions: [] });
    expect(exemptionIds(await finding(image, 'CVE-2022-48174'))).toHaveLength(1);
  });

  it('the spec sample lists only affected versions in a not_affected statement: it exempts nothing, and says so', async () => {
    const [vex] = await ok({ 'spec.cdx.json': sample('cyclonedx/cdx-1.6-spec-valid-vulnerability.json') });
    expect(vex?.vex).toMatchObject({ statements: 0, exempting: 0, exemptions: 0, unmatched: 0 });
    expect(vex?.warnings).toEqual([
      '$.vulnerabilities[0].affects[0] lists no version secinv can take as unaffected: that statement exempts nothing',
    ]);
  });

  it('a statement loaded before the scan applies once the scan arrives, through an alias too', async () => {
    // The spec sample's statement without its versions: about the ref's own version.
    const spec = JSON.parse(sample('cyclonedx/cdx-1.6-spec-valid-vulnerability.json')) as {
      vulnerabilities: { affects: Json[] }[];
    };
    delete spec.vulnerabilities[0]?.affects[0]?.versions;
    const [vex] = await ok({ 'spec.cdx.json': JSON.stringify(spec) });
    expect(vex?.vex).toMatchObject({ statements: 1, exempting: 1, exemptions: 0, unmatched: 1 });
    const [scan] = await ok({ 'jar.json': own('trivy-jar-jackson.json') }, { assetId: A2 });
    expect(scan).toMatchObject({ assetId: A2, added: 1 });
    const exempted = await finding(A2, 'CVE-2018-7489');
    expect(exempted.exemptions).toMatchObject([
      {
        exemption: {
          name: 'urn:uuid:3e671687-395b-41f5-a30f-a58921a69b79/1 · SNYK-JAVA-COMFASTERXMLJACKSONCORE-32111',
          reason:
            'code_not_reachable: An optional explanation of why the application is not affected by the vulnerable component.',
          createdAt: '2022-01-01T00:00:00.000Z',
          updatedAt: '2022-02-01T00:00:00.000Z',
          rules: [
            { vulnerabilityId: 'SNYK-JAVA-COMFASTERXMLJACKSONCORE-32111', assetIds: [A2] },
            { vulnerabilityId: 'CVE-2018-7489', assetIds: [A2] },
          ],
        },
      },
    ]);
  });

  it("never reaches another tenant: tenant B's asset with the same id keeps no exemption", async () => {
    const b = await findings(A1, keyB);
    expect(b.length).toBeGreaterThan(0);
    for (const f of b) expect(f.exemptions).toEqual([]);
    const listed = await api('/v1/tenant/vulnerabilities?isExempted=true', keyB);
    expect(listed.data).toEqual([]);
  });

  it('a VEX document and the scan it speaks of in one run: the new image asset is matched by its digest', async () => {
    const result = await ingest(
      {
        'busybox.json': sample('grype/grype-image-busybox-epss.json'),
        'busybox.vex.json': own('openvex-busybox.json'),
      },
      { tenantId: TENANT_B, provider: 'Azure' },
    );
    expect(result.problems).toEqual([]);
    expect(result.files[0]).toMatchObject({ assetCreated: true });
    expect(result.files[1]?.vex).toMatchObject({ exemptions: 2, unmatched: 1 });
    const exempted = (await api('/v1/tenant/vulnerabilities?isExempted=true', keyB)).data as Json[];
    expect(exempted.map((f) => f.vulnerabilityId).sort()).toEqual(['CVE-2021-42374', 'CVE-2022-48174']);
  });

  it('OpenVEX problems name the JSON path; nothing is written', async () => {
    const result = await ingest({
      'bad.vex.json': JSON.stringify({
        '@context': 'https://openvex.dev/ns/v0.2.0',
        '@id': 'bad',
        statements: [
          { products: ['pkg:npm/x@1'], status: 'not_affected' },
          { vulnerability: 'CVE-1', status: 'maybe' },
        ],
      }),
    });
    expect(result.problems).toEqual([
      {
        file: 'bad.vex.json',
        path: '$.statements[0].vulnerability',
        message: 'must name the vulnerability (`name`, else `@id`)',
      },
      {
        file: 'bad.vex.json',
        path: '$.statements[1].status',
        message: 'must be one of not_affected, affected, fixed, under_investigation, not "maybe"',
      },
    ]);
  });
});
