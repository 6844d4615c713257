// A report's merged findings: the same merge whether they are held as objects or moved to the scratch file on disk
// (src/ingest/scan.ts findingSet), and a Trivy report larger than what is held in memory ingests whole, its packages
// merged across the point where the findings moved to disk.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { findingSet, withLateTarget, type ScanFinding, type ScanPackage } from '../../src/ingest/scan.js';
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

  it('are read in the order of their ids, as SQLite orders text, whether held in memory or on disk', () => {
    // First seen out of order; U+FFFF sorts before an astral character as UTF-8 bytes, after it as UTF-16 units.
    const ids = ['GHSA-b', 'CVE-9', 'CVE-10', 'CVE-\u{1F600}', 'CVE-\uFFFF', 'CVE-1', 'GHSA-a'];
    const expected = ['CVE-1', 'CVE-10', 'CVE-9', 'CVE-\uFFFF', 'CVE-\u{1F600}', 'GHSA-a', 'GHSA-b'];
    for (const inMemory of [100, 2]) {
      const findings = findingSet(inMemory);
      for (const id of ids) findings.merge(row(id));
      findings.merge(row('CVE-9', { packages: [pkg('b')] }));
      expect([...findings.values()].map((f) => f.vulnerabilityId)).toEqual(expected);
      expect([...findings.values()].find((f) => f.vulnerabilityId === 'CVE-9')?.packages).toHaveLength(2);
      const spilled = findings.spilled();
      expect(spilled === null).toBe(inMemory === 100);
      if (spilled !== null) expect([...spilled.entries].map(([id]) => id)).toEqual(expected);
      findings.close();
    }
  });

  it('take the late target once per read, however often they are read, and hand it over with the texts on disk', () => {
    for (const inMemory of [100, 2]) {
      const findings = findingSet(inMemory);
      for (const r of rows) findings.merge(structuredClone(r));
      findings.finish({ targetName: 'registry/app:1', distro: 'debian' });
      // Asking whether they are on disk holds nothing open that a read would need.
      expect(findings.spilled() === null).toBe(inMemory === 100);
      expect([...findings.values()]).toHaveLength(6); // a first read
      const read = [...findings.values()];
      expect(new Set(read.flatMap((f) => f.packages.map((p) => `${p.targetName} ${p.targetType}`)))).toEqual(
        new Set(['registry/app:1 jar']),
      );
      const spilled = findings.spilled();
      if (inMemory === 100) expect(spilled).toBeNull();
      else {
        expect(spilled?.target).toEqual({ targetName: 'registry/app:1', distro: 'debian' });
        const entries = [...(spilled?.entries ?? [])];
        const texts = entries.map(([, text]) => JSON.parse(text) as ScanFinding);
        // Each text comes with its own id, in the order values() reads them.
        expect(entries.map(([id]) => id)).toEqual(texts.map((f) => f.vulnerabilityId));
        expect(texts.map((f) => f.vulnerabilityId)).toEqual(read.map((f) => f.vulnerabilityId));
        expect(texts.map((f) => withLateTarget(f, spilled?.target ?? null))).toEqual(read);
      }
      findings.close();
    }
  });
});

// Each ingests past the findings held in memory, with the bound lowered for the test (IngestOptions.findingsInMemory):
// the findings past it go to the scratch file and are prepared on their own thread, as past the default's 10,000.
const IN_MEMORY = 500;
const PAST = { findingsInMemory: IN_MEMORY };
describe('a Trivy report with more findings than are held in memory', () => {
  const suite = ingestSuite();
  const count = IN_MEMORY + 50;
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
    const result = await suite.ingest(
      { 'big.json': JSON.stringify(report) },
      { provider: 'AWS', region: 'us-east-1', ...PAST },
    );
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

  // The findings past those held in memory are prepared on a thread of their own (src/ingest/prepare-thread.ts).
  const findingOf = async (assetId: string, vulnerabilityId: string) => {
    const query = `assetIds=${encodeURIComponent(assetId)}&vulnerabilityIds=${vulnerabilityId}`;
    const body = await suite.api(`/v1/tenant/vulnerabilities?${query}`);
    return (body.data as Record<string, unknown>[])[0];
  };

  it('again, a month later: every finding updated, each keeping when it was first seen', async () => {
    const later = { ...report, CreatedAt: '2024-07-01T00:00:00Z' };
    const result = await suite.ingest(
      { 'big.json': JSON.stringify(later) },
      { provider: 'AWS', region: 'us-east-1', ...PAST },
    );
    expect(result.problems).toEqual([]);
    expect(result.files[0]).toMatchObject({ added: 0, updated: count, resolved: 0 });
    const last = await findingOf(result.files[0]!.assetId!, `CVE-2024-${100000 + count - 1}`);
    expect(last).toMatchObject({
      firstObservedAt: '2024-06-01T00:00:00.000Z',
      lastObservedAt: '2024-07-01T00:00:00.000Z',
      severityLevel: 'HIGH',
    });
  });

  it('a finding with an alias over its limit fails the file, located, with most of it unread; nothing changes', async () => {
    const broken = structuredClone(report) as typeof report & {
      Results: { Vulnerabilities: Record<string, unknown>[] }[];
    };
    // Early in the report: the failure comes back while most of the findings wait on disk, unread.
    const at = 100;
    broken.CreatedAt = '2024-08-01T00:00:00Z';
    broken.Results[0]!.Vulnerabilities[at]!.VendorIDs = ['GHSA-1', `GHSA-${'x'.repeat(600)}`];
    const result = await suite.ingest(
      { 'big.json': JSON.stringify(broken) },
      { provider: 'AWS', region: 'us-east-1', ...PAST },
    );
    expect(result.problems).toHaveLength(1);
    expect(result.problems[0]!.message).toMatch(
      new RegExp(
        `^the finding at \\$\\.Results\\[0\\]\\.Vulnerabilities\\[${at}\\]: alias 2 \\(GHSA-x{15}…\\) must be at most 512 bytes`,
      ),
    );
    // The asset the first ingest of the report made.
    const assetId = `sirn:assets:${TENANT_A}:aws:ecr:image:us-east-1:registry.example/big@sha256:${'d'.repeat(64)}`;
    expect(await findingOf(assetId, `CVE-2024-${100000 + at}`)).toMatchObject({
      lastObservedAt: '2024-07-01T00:00:00.000Z',
    });
  });
});

describe('a Grype report with more findings than are held in memory', () => {
  const suite = ingestSuite();
  const sample = JSON.parse(
    readFileSync(new URL('../fixtures/ingest/grype/grype-image-busybox-epss.json', import.meta.url), 'utf8'),
  ) as { matches: { vulnerability: { id: string }; relatedVulnerabilities?: unknown[] }[] };
  // The fixture's matches again and again, each copy under other ids, past the findings held in memory.
  const copies = Math.ceil((IN_MEMORY + 50) / sample.matches.length);
  const matches = [...Array(copies).keys()].flatMap((copy) =>
    sample.matches.map((m) => ({
      ...m,
      vulnerability: { ...m.vulnerability, id: `${m.vulnerability.id}-${copy}` },
      relatedVulnerabilities: [],
    })),
  );

  it('gives every package the image as its target, known only after the matches, as when held in memory', async () => {
    const result = await suite.ingest(
      { 'busybox.json': JSON.stringify({ ...sample, matches }) },
      { provider: 'Azure', ...PAST },
    );
    expect(result.problems).toEqual([]);
    const distinct = new Set(matches.map((m) => m.vulnerability.id)).size;
    expect(distinct).toBeGreaterThan(IN_MEMORY);
    expect(result.files[0]).toMatchObject({ added: distinct });
    const assetId = encodeURIComponent(result.files[0]!.assetId!);
    const body = await suite.api(
      `/v1/tenant/vulnerabilities?assetIds=${assetId}&vulnerabilityIds=CVE-2021-42376-${copies - 1}`,
    );
    const [finding] = body.data as { packages: Record<string, unknown>[] }[];
    expect(finding!.packages[0]).toMatchObject({
      packageName: 'busybox',
      targetName: 'busybox:1.32.1',
      targetType: 'binary',
      targetClass: 'lang-pkgs',
    });
  });
});
