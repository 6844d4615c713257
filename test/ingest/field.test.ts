// Reports from the field on a real database of each dialect: a NUL character in a scanner's string (Grype 0.75), a
// CycloneDX VEX statement scoped to versions (CISA's Case 6, and `vers` ranges on a package), an OpenVEX statement
// naming its vulnerability by `@id` only (Trivy's VEX repository), a clean account's Prowler run `[]`, and formats
// that are not read, refused by name with what to run instead.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { A1, A2 } from '../fixtures.js';
import { TENANT_A } from '../helpers.js';
import { ingestSuite } from './suite.js';

const read = (path: string): string => readFileSync(new URL(`../fixtures/${path}`, import.meta.url), 'utf8');
type Json = Record<string, unknown>;

const suite = ingestSuite();
const { ingest, api } = suite;
const ok = async (files: Record<string, string>, options: Parameters<typeof ingest>[1] = {}) => {
  const result = await ingest(files, options);
  expect(result.problems).toEqual([]);
  return result.files;
};
/** The asset's findings, exempted ones included, by id. */
const findings = async (assetId: string): Promise<Map<string, Json>> => {
  const list = async (exempted: boolean) =>
    (await api(`/v1/tenant/vulnerabilities?assetIds=${encodeURIComponent(assetId)}&perPage=100&isExempted=${exempted}`))
      .data as Json[];
  return new Map([...(await list(false)), ...(await list(true))].map((f) => [String(f.vulnerabilityId), f]));
};
const exemptionNames = (f: Json | undefined) =>
  ((f?.exemptions ?? []) as { exemption: { name: string } }[]).map((e) => e.exemption.name);

describe('a NUL character in a scanner string', () => {
  it("Grype's Java version: the report is kept, the character replaced by U+FFFD and counted", async () => {
    const [file] = await ok(
      { 'grype.json': read('ingest/grype/dd-anchore_grype-fix_available.json') },
      { provider: 'Azure' },
    );
    expect(file?.warnings).toEqual(["5 NUL characters (U+0000) in the report's text were replaced by U+FFFD"]);
    const [finding, ...more] = [...(await findings(file?.assetId ?? '')).values()];
    expect(more).toEqual([]);
    expect(finding).toMatchObject({ vulnerabilityId: 'CVE-2009-3882' });
    expect((finding?.packages as Json[])[0]).toMatchObject({
      packageName: 'java',
      installedVersion: '17.0.10+7\uFFFD-J-ms8m',
    });
  });

  it('in a title, a tag, raw data keys and values; an escaped backslash before `u0000` is text, kept', async () => {
    const [file] = await ok({ 'jdk.json': read('ingest-own/trivy-image-nul.json') });
    expect(file?.warnings).toEqual(["6 NUL characters (U+0000) in the report's text were replaced by U+FFFD"]);
    const assetId = file?.assetId ?? '';
    const asset = (await api(`/v1/tenant/assets/${encodeURIComponent(assetId)}?include=rawData`)).data as Json;
    expect(asset.resourceName).toBe('123456789012.dkr.ecr.eu-west-1.amazonaws.com/tools/jdk:17\uFFFD');
    expect(JSON.stringify(asset.rawData)).toContain('"vendor\uFFFD":"Acme\uFFFD Inc."');
    const finding = (await findings(assetId)).get('CVE-2009-3882');
    expect(finding).toMatchObject({
      title: 'Unspecified vulnerability in the Swing\uFFFD implementation',
      description: 'A literal backslash-u text: \\u0000 stays as it is.',
    });
  });
});

describe('CycloneDX VEX scoped to versions', () => {
  it("CISA's Case 6: versions of a subject that names none exempt nothing, said in the summary", async () => {
    const [file] = await ok(
      { 'case6.json': read('ingest/cyclonedx/cdx-examples-vex-cisa-case-6-vex.json') },
      { assetId: A1 },
    );
    expect(file).toMatchObject({ assetId: A1, added: 1 });
    expect(file?.vex).toMatchObject({ statements: 0, exemptions: 0, unmatched: 0 });
    expect(file?.warnings).toEqual([
      "$.vulnerabilities[1].affects[0] limits the statement to versions of the document's subject, which names no version (`metadata.component.version`): it exempts nothing",
    ]);
    // The exploitable entry is a finding; the not_affected one, about other versions, does not exempt it.
    expect(exemptionNames((await findings(A1)).get('CVE-2021-44228'))).toEqual([]);
  });

  it('the same document about a subject of a listed version exempts it; of another version, not', async () => {
    const doc = JSON.parse(read('ingest/cyclonedx/cdx-examples-vex-cisa-case-6-vex.json')) as {
      metadata: { component: Json };
    };
    const at = async (version: string) => {
      doc.metadata.component.version = version;
      const [file] = await ok({ 'case6.json': JSON.stringify(doc) }, { assetId: A1 });
      expect(file?.warnings).toEqual([]);
      return exemptionNames((await findings(A1)).get('CVE-2021-44228'));
    };
    expect(await at('2.7.5')).toEqual(['case6.json · CVE-2021-44228']);
    expect(await at('2.6')).toEqual([]);
    expect(await at('4.2')).toEqual(['case6.json · CVE-2021-44228']);
  });

  it('a package ref with vers ranges: only the versions listed unaffected are exempted', async () => {
    const scan = JSON.parse(read('ingest-own/trivy-jar-jackson.json')) as { Results: { Vulnerabilities: Json[] }[] };
    const [row] = scan.Results[0]?.Vulnerabilities ?? [];
    for (const id of ['CVE-2019-12384', 'CVE-2019-14540', 'CVE-2019-16335', 'CVE-2019-17267'])
      scan.Results[0]?.Vulnerabilities.push({ ...row, VulnerabilityID: id });
    await ok({ 'jar.json': JSON.stringify(scan) }, { assetId: A2 });
    const [file] = await ok({ 'jackson.vex.json': read('ingest-own/cdx-vex-versions-jackson.json') });
    expect(file?.warnings).toEqual([
      "$.vulnerabilities[2].affects[0].versions[0].range uses the vers scheme 'deb', which secinv cannot order (it orders semver, npm, maven, generic): that range exempts nothing",
      '$.vulnerabilities[2].affects[0] lists no version secinv can take as unaffected: that statement exempts nothing',
      '$.vulnerabilities[3].affects[0] lists no version secinv can take as unaffected: that statement exempts nothing',
    ]);
    expect(file?.vex).toMatchObject({ statements: 3, exempting: 3, exemptions: 2, unmatched: 1 });
    const stored = await findings(A2);
    const doc = 'urn:uuid:5a1e3f0c-8d2b-4c7e-9f61-2b7d4e8a9c10/1';
    // A2 has findings of its own from the fixture inventory: the scan's are these.
    const scanned = ['CVE-2018-7489', 'CVE-2019-12384', 'CVE-2019-14540', 'CVE-2019-16335', 'CVE-2019-17267'];
    expect(scanned.map((id) => [id, exemptionNames(stored.get(id))])).toEqual([
      ['CVE-2018-7489', [`${doc} · CVE-2018-7489`]],
      ['CVE-2019-12384', []],
      ['CVE-2019-14540', []],
      ['CVE-2019-16335', []],
      ['CVE-2019-17267', [`${doc} · CVE-2019-17267`]],
    ]);
  });

  it('a malformed range is refused with its JSON path, writing nothing', async () => {
    const doc = JSON.parse(read('ingest-own/cdx-vex-versions-jackson.json')) as {
      serialNumber: string;
      vulnerabilities: { affects: { versions: Json[] }[] }[];
    };
    doc.serialNumber = 'urn:uuid:00000000-0000-4000-8000-000000000001';
    (doc.vulnerabilities[0]?.affects[0]?.versions[0] as Json).range = 'vers:maven/>=2.9.0|>=2.9.5';
    const result = await ingest({ 'bad.vex.json': JSON.stringify(doc) });
    expect(result.problems).toEqual([
      {
        file: 'bad.vex.json',
        path: '$.vulnerabilities[0].affects[0].versions[0].range',
        message: "has two lower bounds in a row in 'vers:maven/>=2.9.0|>=2.9.5'",
      },
    ]);
  });
});

describe("OpenVEX statements naming the vulnerability by '@id' only", () => {
  it("Trivy's VEX repository document exempts the package through the '@id'", async () => {
    const image = {
      SchemaVersion: 2,
      CreatedAt: '2026-11-07T07:00:00Z',
      ArtifactName: '123456789012.dkr.ecr.eu-west-1.amazonaws.com/edge/proxy:1',
      ArtifactType: 'container_image',
      Metadata: { ImageID: `sha256:${'7'.repeat(64)}` },
      Results: [
        {
          Target: 'proxy (debian 12.5)',
          Class: 'os-pkgs',
          Type: 'debian',
          Vulnerabilities: [
            {
              VulnerabilityID: 'CVE-2023-1234',
              PkgName: 'openssl',
              InstalledVersion: '1.1.1t-r0',
              PkgIdentifier: { PURL: 'pkg:deb/debian/openssl@1.1.1t-r0?arch=amd64&distro=debian-12.5' },
              Severity: 'HIGH',
            },
          ],
        },
      ],
    };
    const [scan] = await ok({ 'proxy.json': JSON.stringify(image) });
    const [file] = await ok({ 'openssl.vex.json': read('ingest/openvex/trivy-vex-repo-openssl-id-only.json') });
    expect(file?.vex).toEqual({
      documentId: 'https://openvex.dev/docs/public/vex-5d6e2706',
      statements: 1,
      exempting: 1,
      exemptions: 1,
      unmatched: 0,
    });
    expect(exemptionNames((await findings(scan?.assetId ?? '')).get('CVE-2023-1234'))).toEqual([
      'https://openvex.dev/docs/public/vex-5d6e2706 · CVE-2023-1234',
    ]);
  });
});

describe("a clean account's Prowler run", () => {
  it('`[]` is an empty Prowler OCSF report with --format auto: it adds and resolves nothing, and says why', async () => {
    const before = await suite.checks(TENANT_A);
    const [file] = await ok({ 'prowler.json': read('ingest/assets/dd-prowler-prowler_zero_vul.json') });
    expect(file).toMatchObject({ format: 'prowler-ocsf', assets: 0, checksFailed: 0, checksResolved: 0 });
    expect(file?.warnings).toEqual([
      'an empty Prowler OCSF report (no findings): it names no account, resource or check, so it adds and resolves nothing',
    ]);
    expect(await suite.checks(TENANT_A)).toEqual(before);
  });
});

describe('formats that are not read are refused by name, with what to run instead', () => {
  it.each([
    [
      'assets/prowler-csv-aws.csv',
      'is Prowler CSV output, which is not supported: run prowler with `--output-formats json-ocsf`',
    ],
    [
      'assets/prowler-v2-csv-aws-one.csv',
      'is Prowler v2 CSV output, which is not supported: run Prowler 3 or later with `--output-formats json-ocsf`',
    ],
    [
      'assets/prowler-v2-json-aws-one.json',
      "is Prowler v2's JSON output, which is not supported: run Prowler 3 or later with `--output-formats json-ocsf`",
    ],
    [
      'openvex/trivy-csaf-not-affected.json',
      'is a CSAF document (CSAF VEX), which is not supported: ask for the statements as OpenVEX or CycloneDX VEX JSON',
    ],
  ])('%s', async (path, message) => {
    const result = await ingest({ [path]: read(`ingest/${path}`) });
    expect(result).toEqual({ files: [], problems: [{ file: path, path: null, message }], risks: null });
  });

  it('legacy Trivy, JSON null, Syft JSON, SARIF', async () => {
    const result = await ingest({
      'trivy-0.19.json': '[{"Target": "alpine:3.10 (alpine 3.10.2)", "Type": "alpine", "Vulnerabilities": null}]',
      'null.json': 'null\n',
      'syft.json': '{"artifacts": [], "artifactRelationships": [], "source": {}, "descriptor": {"name": "syft"}}',
      'sarif.json': '{"$schema": "https://json.schemastore.org/sarif-2.1.0.json", "version": "2.1.0", "runs": []}',
    });
    expect(result.problems.map((p) => [p.file, p.message])).toEqual([
      [
        'trivy-0.19.json',
        'is a report of Trivy before 0.20 (a bare array of Results), which is not supported: run a current trivy with `--format json` (SchemaVersion 2)',
      ],
      ['null.json', 'is the JSON value `null`, not a report: the scanner wrote nothing (did it fail?)'],
      [
        'syft.json',
        "is Syft's own JSON (an SBOM without vulnerabilities), which is not supported: scan it with `grype sbom:FILE -o json`, or ask syft for `-o cyclonedx-json`",
      ],
      [
        'sarif.json',
        'is SARIF, which is not supported: run the scanner with its JSON output (`trivy --format json`, `grype -o json`)',
      ],
    ]);
  });
});
