// A report's merged findings: the same merge whether they are held as objects or moved to the scratch file on disk
// (src/ingest/scan.ts findingSet), and a Trivy report larger than what is held in memory ingests whole, its packages
// merged across the point where the findings moved to disk.
import { describe, expect, it } from 'vitest';
import { FINDINGS_IN_MEMORY, findingSet, type ScanFinding, type ScanPackage } from '../../src/ingest/scan.js';
import { TENANT_A } from '../helpers.js';
import { ingestSuite } from './suite.js';

const pkg = (name: string, version = '1.0'): ScanPackage => ({
  packageName: name,
  installedVersion: version,
  fixedVersion: null,
  targetName: 'app',
  targetType: 'jar',
  targetPath: null,
  targetClass: 'lang-pkgs',
  purl: null,
});

const row = (id: string, extra: Partial<ScanFinding> = {}): ScanFinding => ({
  vulnerabilityId: id,
  title: `title of ${id}`,
  description: null,
  severity: 'LOW',
  severitySource: 'nvd',
  publishedDate: null,
  primaryUrl: null,
  cwes: [],
  packages: [pkg('a')],
  vectors: [],
  aliases: [],
  location: `$.x[${id}]`,
  ...extra,
});

// Rows of 6 ids, several repeated with other packages, a higher severity, more vectors and aliases.
const rows: ScanFinding[] = [
  row('CVE-1'),
  row('CVE-2', { severity: 'HIGH', packages: [pkg('b'), pkg('b')] }),
  row('CVE-3', { vectors: ['CVSS:3.1/AV:N'], aliases: ['GHSA-1'] }),
  row('CVE-1', { severity: 'CRITICAL', title: 'a later title is not kept', packages: [pkg('a'), pkg('c')] }),
  row('CVE-4'),
  row('CVE-5'),
  row('CVE-3', { vectors: ['CVSS:3.1/AV:N', 'CVSS:3.1/AV:L'], aliases: ['GHSA-2'], packages: [pkg('a', '2.0')] }),
  row('CVE-6', { severity: 'MEDIUM' }),
  row('CVE-2', { severity: 'LOW', packages: [pkg('d')] }),
];

describe('a scan’s findings', () => {
  it('merge the same held in memory and moved to disk: first row’s fields, every package once, highest severity', () => {
    const held = findingSet(100);
    const spilled = findingSet(2);
    for (const r of rows) {
      held.merge(structuredClone(r));
      spilled.merge(structuredClone(r));
    }
    const all = [...held.values()];
    expect([...spilled.values()]).toEqual(all);
    expect([...spilled.keys()]).toEqual([...held.keys()]);
    expect([spilled.size, held.size]).toEqual([6, 6]);
    expect(all.map((f) => f.vulnerabilityId)).toEqual(['CVE-1', 'CVE-2', 'CVE-3', 'CVE-4', 'CVE-5', 'CVE-6']);
    const [one, two, three] = all;
    expect(one).toMatchObject({ title: 'title of CVE-1', severity: 'CRITICAL', location: '$.x[CVE-1]' });
    expect(one!.packages.map((p) => p.packageName)).toEqual(['a', 'c']);
    expect(two!.severity).toBe('HIGH');
    expect(two!.packages.map((p) => p.packageName)).toEqual(['b', 'd']);
    expect(three!.packages.map((p) => p.installedVersion)).toEqual(['1.0', '2.0']);
    expect(three!.vectors).toEqual(['CVSS:3.1/AV:N', 'CVSS:3.1/AV:L']);
    expect(three!.aliases).toEqual(['GHSA-1', 'GHSA-2']);
    expect([spilled.has('CVE-6'), spilled.has('CVE-7')]).toEqual([true, false]);
    held.close();
    spilled.close();
  });

  it('pass each finding through a finishing step once per read, however often they are read', () => {
    for (const inMemory of [100, 2]) {
      const findings = findingSet(inMemory);
      for (const r of rows) findings.merge(structuredClone(r));
      findings.finish((f) => {
        for (const p of f.packages) p.targetName = `${p.targetName}!`;
      });
      expect([...findings.values()]).toHaveLength(6); // a first read
      const read = [...findings.values()];
      expect(new Set(read.flatMap((f) => f.packages.map((p) => p.targetName)))).toEqual(new Set(['app!']));
      findings.close();
    }
  });
});

describe('a Trivy report with more findings than are held in memory', () => {
  const suite = ingestSuite();
  const count = FINDINGS_IN_MEMORY + 50;
  const vulnerability = (i: number, pkgName: string) => ({
    VulnerabilityID: `CVE-2024-${100000 + i}`,
    PkgName: pkgName,
    InstalledVersion: '1.0',
    Severity: i % 2 ? 'HIGH' : 'LOW',
  });
  const report = {
    SchemaVersion: 2,
    CreatedAt: '2024-06-01T00:00:00Z',
    ArtifactName: 'registry.example/big:1',
    ArtifactType: 'container_image',
    Metadata: { ImageID: `sha256:${'c'.repeat(64)}`, RepoDigests: [`registry.example/big@sha256:${'d'.repeat(64)}`] },
    Results: [
      {
        Target: 'first',
        Class: 'lang-pkgs',
        Type: 'jar',
        Vulnerabilities: [...Array(count).keys()].map((i) => vulnerability(i, 'lib-a')),
      },
      // The first ids again, in another package, after the findings moved to disk.
      {
        Target: 'second',
        Class: 'lang-pkgs',
        Type: 'jar',
        Vulnerabilities: [0, 1, 2].map((i) => vulnerability(i, 'lib-b')),
      },
    ],
  };

  it('ingests every finding once, with the packages of both targets merged', async () => {
    const result = await suite.ingest({ 'big.json': JSON.stringify(report) }, { provider: 'AWS', region: 'us-east-1' });
    expect(result.problems).toEqual([]);
    expect(result.files[0]).toMatchObject({ added: count, updated: 0, resolved: 0 });
    const assetId = result.files[0]!.assetId!;
    const body = await suite.api(
      `/v1/tenant/vulnerabilities?assetIds=${encodeURIComponent(assetId)}&vulnerabilityIds=CVE-2024-100001&perPage=10`,
      TENANT_A,
    );
    const [finding] = body.data as { packages: { packageName: string; targetName: string }[] }[];
    expect(finding!.packages.map((p) => [p.packageName, p.targetName])).toEqual([
      ['lib-a', 'first'],
      ['lib-b', 'second'],
    ]);
    const total = await suite.api(`/v1/tenant/vulnerabilities?assetIds=${encodeURIComponent(assetId)}&perPage=1`);
    expect((total.meta as { total: number }).total).toBe(count);
  });
});
