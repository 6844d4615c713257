// Format detection by content on the real sample files (test/fixtures/ingest, PROVENANCE.md there) and on every kind
// of input that is not a supported report, each with its specific reason.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { detectFormat, HEAD_BYTES, type Detection } from '../../src/input/detect.js';

const fixture = (path: string): Buffer => readFileSync(new URL(`../fixtures/ingest/${path}`, import.meta.url));
const detect = (content: Buffer | string, complete = true): Detection => {
  const bytes = typeof content === 'string' ? Buffer.from(content) : content;
  return detectFormat(bytes.subarray(0, HEAD_BYTES), complete && bytes.length <= HEAD_BYTES);
};
const problem = (content: Buffer | string): string => {
  const result = detect(content);
  if (!('problem' in result)) throw new Error(`detected as ${result.format}`);
  return result.problem;
};

describe('every sample report is recognised by its content', () => {
  it.each([
    ['trivy/trivy-image-example-app-all-statuses.json', 'trivy'],
    ['trivy/trivy-image-teamdojo-multi-target.json', 'trivy'],
    ['trivy/trivy-repo-npm.json', 'trivy'],
    ['trivy/trivy-vm-amazonlinux2.json', 'trivy'],
    ['trivy-k8s/trivy-k8s-minikube-resources.json', 'trivy-k8s'],
    ['trivy-k8s/trivy-operator-vulnreport-many.json', 'trivy-operator'],
    ['grype/grype-dir-v024.json', 'grype'],
    ['grype/grype-image-busybox-epss.json', 'grype'],
    ['grype/grype-image-chainguard-ruby.json', 'grype'],
    ['grype/grype-image-same-cve-two-paths.json', 'grype'],
    ['cyclonedx/cdx-1.4-log4j-in-triage.json', 'cyclonedx'],
    ['cyclonedx/cdx-1.6-spec-valid-vulnerability.json', 'cyclonedx'],
    ['cyclonedx/cdx-sbom-1.7-trivy-npm-with-vulns.json', 'cyclonedx'],
    ['cyclonedx/cdx-vex-1.4-cisa-case8-bomlink.json', 'cyclonedx'],
    ['cyclonedx/cdx-vex-1.4-justifications.json', 'cyclonedx'],
    ['openvex/openvex-grype-processor.json', 'openvex'],
    ['openvex/openvex-many-statuses.json', 'openvex'],
    ['openvex/openvex-vexctl-demo.json', 'openvex'],
    ['assets/prowler-ocsf-azure.json', 'prowler-ocsf'],
    ['assets/prowler-ocsf-kubernetes.json', 'prowler-ocsf'],
    ['assets/prowler-v3-ocsf-aws-one.json', 'prowler-ocsf'],
  ])('%s is %s', (path, format) => {
    expect(detect(fixture(path))).toEqual({ format });
  });

  it('a report larger than the head is recognised from its first bytes', () => {
    const big = Buffer.concat([
      fixture('grype/grype-image-busybox-epss.json').subarray(0, 40_000),
      Buffer.alloc(HEAD_BYTES, ' '),
    ]);
    expect(detect(big, false)).toEqual({ format: 'grype' });
  });
});

describe('the field samples', () => {
  it.each([
    ['trivy-k8s/scan2html-k8s-results_k8s_cluster_summary.json', 'trivy-k8s'],
    ['trivy-k8s/dd-trivy_operator-configauditreport_single_vuln.json', 'trivy-operator'],
    ['trivy-k8s/dd-trivy_operator-exposedsecretreport_single_vuln.json', 'trivy-operator'],
    ['grype/dd-anchore_grype-fix_available.json', 'grype'],
    ['cyclonedx/cdx-examples-vex-cisa-case-6-vex.json', 'cyclonedx'],
    // Prowler writes `[]` for a run without findings: an empty Prowler OCSF report.
    ['assets/dd-prowler-prowler_zero_vul.json', 'prowler-ocsf'],
  ])('%s is %s', (path, format) => {
    expect(detect(fixture(path))).toEqual({ format });
  });

  it('a bare array of trivy-operator reports is a trivy-operator report', () => {
    const own = readFileSync(new URL('../fixtures/ingest-own/trivy-operator-reports-array.json', import.meta.url));
    expect(detect(own)).toEqual({ format: 'trivy-operator' });
  });
});

describe('formats that are not read are named, with what to run instead', () => {
  it('Prowler v2 CSV and JSON', () => {
    expect(problem(fixture('assets/prowler-v2-csv-aws-one.csv'))).toBe(
      'is Prowler v2 CSV output, which is not supported: run Prowler 3 or later with `--output-formats json-ocsf`',
    );
    const v2 =
      "is Prowler v2's JSON output, which is not supported: run Prowler 3 or later with `--output-formats json-ocsf`";
    const line = fixture('assets/prowler-v2-json-aws-one.json').toString();
    expect(problem(line)).toBe(v2);
    // Prowler v2 wrote one object per line: two lines are not one JSON document.
    expect(problem(line + line)).toBe(v2);
  });

  it('legacy Trivy, JSON null and other scalars', () => {
    expect(problem('[{"Target": "alpine:3.10 (alpine 3.10.2)", "Type": "alpine", "Vulnerabilities": null}]')).toBe(
      'is a report of Trivy before 0.20 (a bare array of Results), which is not supported: run a current trivy with `--format json` (SchemaVersion 2)',
    );
    expect(problem('null\n')).toBe('is the JSON value `null`, not a report: the scanner wrote nothing (did it fail?)');
    expect(problem('42')).toBe('is a single JSON number, not a report');
  });

  it('CSAF VEX, Syft JSON, SARIF', () => {
    expect(
      problem(
        '{"document": {"csaf_version": "2.0", "category": "csaf_vex"}, "product_tree": {}, "vulnerabilities": []}',
      ),
    ).toBe(
      'is a CSAF document (CSAF VEX), which is not supported: ask for the statements as OpenVEX or CycloneDX VEX JSON',
    );
    expect(
      problem('{"artifacts": [], "artifactRelationships": [], "source": {}, "descriptor": {"name": "syft"}}'),
    ).toBe(
      "is Syft's own JSON (an SBOM without vulnerabilities), which is not supported: scan it with `grype sbom:FILE -o json`, or ask syft for `-o cyclonedx-json`",
    );
    expect(
      problem('{"$schema": "https://json.schemastore.org/sarif-2.1.0.json", "version": "2.1.0", "runs": []}'),
    ).toBe(
      'is SARIF, which is not supported: run the scanner with its JSON output (`trivy --format json`, `grype -o json`)',
    );
  });

  it("trivy-operator's other resources, by kind", () => {
    const operator = (kind: string) =>
      `{"apiVersion": "aquasecurity.github.io/v1alpha1", "kind": "${kind}", "report": {}}`;
    const read = 'secinv reads VulnerabilityReport, ConfigAuditReport and ExposedSecretReport';
    expect(problem(operator('ClusterComplianceReport'))).toBe(
      `is a trivy-operator ClusterComplianceReport (a compliance summary, no findings), which is not read: ${read}`,
    );
    expect(problem(operator('SbomReport'))).toBe(
      `is a trivy-operator SbomReport (packages without vulnerabilities), which is not read: ${read}`,
    );
    expect(problem(operator('RbacAssessmentReport'))).toBe(
      `is a trivy-operator RbacAssessmentReport, which is not read: ${read}`,
    );
  });
});

describe('anything else gets a specific reason', () => {
  it('feeds are named as feeds', () => {
    expect(problem(fixture('kev/known_exploited_vulnerabilities.2025.01.24.excerpt.json'))).toBe(
      'is the CISA KEV catalog, a feed: load it with `secinv feeds load`',
    );
    expect(problem(fixture('epss/epss_scores-2026-09-29.excerpt-a.csv'))).toBe(
      'is an EPSS feed file: load it with `secinv feeds load`',
    );
    expect(problem(fixture('exploitdb/files_exploits.excerpt-a.csv'))).toContain('is the Exploit-DB feed');
  });

  it('Prowler CSV and the older Prowler JSON name the output to ask for', () => {
    expect(problem(fixture('assets/prowler-csv-aws.csv'))).toBe(
      'is Prowler CSV output, which is not supported: run prowler with `--output-formats json-ocsf`',
    );
    expect(problem('[{"AssessmentStartTime": "2023-01-01", "FindingUniqueId": "x", "CheckID": "iam_root"}]')).toContain(
      "Prowler's older JSON output",
    );
  });

  it("Trivy table output, SARIF, and secinv's own import format", () => {
    const table = 'Report Summary\n\n┌──────────┬──────┐\n│  Target  │ Type │\n└──────────┴──────┘\n';
    expect(problem(table)).toBe('is Trivy table output, which is not supported: run trivy with `--format json`');
    expect(
      problem('alpine:3.19 (alpine 3.19.1)\n=====\nTotal: 2 (UNKNOWN: 0, LOW: 0, MEDIUM: 1, HIGH: 1, CRITICAL: 0)\n'),
    ).toContain('Trivy table output');
    expect(
      problem('{"$schema": "https://json.schemastore.org/sarif-2.1.0.json", "version": "2.1.0", "runs": []}'),
    ).toContain('is SARIF');
    expect(problem('{"kind": "tenant", "record": {"tenantId": "t"}}\n')).toBe(
      "is secinv's own import format: load it with `secinv import`",
    );
    expect(problem('{"tenants": [], "assets": []}')).toContain("bundle of secinv's own import format");
  });

  it('Grype table output, SPDX and CycloneDX XML name the output to ask for', () => {
    expect(
      problem(
        'NAME     INSTALLED  FIXED-IN  TYPE  VULNERABILITY   SEVERITY\nbusybox  1.32.1     1.33.0    apk   CVE-2021-42378  High\n',
      ),
    ).toBe('is Grype table output, which is not supported: run grype with `-o json`');
    const spdx = 'is an SPDX document, which is not supported (nor does SPDX carry vulnerabilities)';
    expect(problem('{"spdxVersion": "SPDX-2.3", "SPDXID": "SPDXRef-DOCUMENT", "packages": []}')).toContain(spdx);
    expect(problem('SPDXVersion: SPDX-2.3\nDataLicense: CC0-1.0\n')).toContain(spdx);
    const xml = 'is CycloneDX XML, which is not supported: ask for CycloneDX JSON';
    expect(
      problem(
        '<?xml version="1.0" encoding="UTF-8"?>\n<bom xmlns="http://cyclonedx.org/schema/bom/1.5" version="1">\n</bom>\n',
      ),
    ).toContain(xml);
    expect(problem('<bom xmlns="http://cyclonedx.org/schema/bom/1.4" serialNumber="urn:uuid:x"></bom>')).toContain(xml);
    // Other XML is not taken for CycloneDX.
    expect(problem('<?xml version="1.0"?>\n<project></project>\n')).toContain('is not JSON (it starts with');
  });

  it('empty, binary, plain text, and JSON of another shape', () => {
    expect(problem('')).toBe('is empty');
    expect(problem('  \n\t\n')).toBe('is empty');
    expect(problem(Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x00, 0x00, 0xff, 0xfe]))).toBe('is binary, not a text report');
    expect(problem('hello world\n')).toContain('is not JSON (it starts with "hello world")');
    expect(problem('[1, 2, 3]')).toBe('is a JSON array of values, not a scanner report');
    expect(problem('[{"a": 1}]')).toContain('not OCSF Detection Findings');
    expect(problem('{"name": "x", "items": [1]}')).toBe(
      'is JSON but not a report secinv reads (top-level keys: name, items); supported: Trivy, Grype, CycloneDX, OpenVEX and Prowler OCSF JSON',
    );
  });

  it('truncated and malformed JSON name the JSON path where it stops', () => {
    const trivy = fixture('trivy/trivy-image-teamdojo-multi-target.json').toString();
    const cut = trivy.slice(0, trivy.indexOf('"VulnerabilityID"', trivy.indexOf('"VulnerabilityID"') + 1) + 20);
    expect(problem(cut)).toMatch(
      /^ends before the JSON is complete \(truncated\?\), inside \$\.Results\[0\]\.Vulnerabilities\[1\]/,
    );
    expect(problem('{"SchemaVersion": 2,\n "Results": [\n {"Target": "x",, }]}')).toBe(
      'is not valid JSON at line 3, $.Results[0]: expected an object key',
    );
  });
});
