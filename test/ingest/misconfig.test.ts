// Trivy misconfigurations into failed checks, on a real database of each dialect: an image's Dockerfile checks and a
// cluster report's resources; a Trivy re-scan resolves what passes or is no longer listed (unless --no-resolve), and
// a scanner without checks never resolves Trivy's.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { IngestResult } from '../../src/ingest/ingest.js';
import { A1 } from '../fixtures.js';
import { TENANT_A } from '../helpers.js';
import { checkKeys } from './checks.js';
import { ingestSuite } from './suite.js';

const read = (path: string): string => readFileSync(new URL(`../fixtures/${path}`, import.meta.url), 'utf8');
const IMAGE = read('ingest-own/trivy-image-misconfig.json');
const MINIKUBE = read('ingest/trivy-k8s/trivy-k8s-minikube-resources.json');
type Json = Record<string, unknown>;

const suite = ingestSuite();
const { ingest } = suite;
const checks = (assetId?: string) => suite.checks(TENANT_A, assetId);
const only = (result: IngestResult) => {
  expect(result.problems).toEqual([]);
  expect(result.files).toHaveLength(1);
  return result.files[0];
};

/** The image report with its Dockerfile Result's misconfigurations changed, scanned at another time. */
function rescan(at: string, misconfigurations: (rows: Json[]) => Json[], base = IMAGE): string {
  const report = JSON.parse(base) as { CreatedAt: string; Results: Json[] };
  report.CreatedAt = at;
  const dockerfile = report.Results.find((r) => r.Target === 'Dockerfile') as Json;
  dockerfile.Misconfigurations = misconfigurations(dockerfile.Misconfigurations as Json[]);
  return JSON.stringify(report);
}
const withStatus = (id: string, status: string) => (rows: Json[]) =>
  rows.map((r) => (r.ID === id ? { ...r, Status: status } : r));

const IMAGE_ID =
  `sirn:assets:${TENANT_A}:aws:ecr:image:eu-west-1:` +
  '123456789012.dkr.ecr.eu-west-1.amazonaws.com/billing/worker@sha256:4444444444444444444444444444444444444444444444444444444444444444';

describe('an image report with Dockerfile misconfigurations', () => {
  it('stores each FAIL as a check (its ID, else its AVDID), PASS and the findings apart', async () => {
    const file = only(await ingest({ 'image.json': IMAGE }));
    expect(file).toMatchObject({ assetId: IMAGE_ID, added: 1, checksFailed: 3, checksAdded: 3, checksResolved: 0 });
    const stored = await checks(IMAGE_ID);
    expect(stored.map((c) => [c.checkId, c.source, c.doc.severity, c.firstObservedAt, c.lastObservedAt])).toEqual([
      ['AVD-DS-0029', 'trivy', 'HIGH', '2026-10-05T09:30:00.500Z', '2026-10-05T09:30:00.500Z'],
      ['DS002', 'trivy', 'HIGH', '2026-10-05T09:30:00.500Z', '2026-10-05T09:30:00.500Z'],
      ['DS026', 'trivy', 'LOW', '2026-10-05T09:30:00.500Z', '2026-10-05T09:30:00.500Z'],
    ]);
    expect(stored[1]?.doc).toEqual({
      checkId: 'DS002',
      source: 'trivy',
      title: "Image user should not be 'root'",
      description: expect.stringMatching(/^Running containers with 'root' user can lead to a container escape/),
      severity: 'HIGH',
      remediation: "Add 'USER <non root user name>' line to the Dockerfile",
      // PrimaryURL is among the References already: listed once.
      references: [
        'https://docs.docker.com/develop/develop-images/dockerfile_best-practices/',
        'https://avd.aquasec.com/misconfig/ds002',
      ],
      detail: 'Specify at least 1 USER command in Dockerfile with non-root user as argument',
    });
    expect(stored[0]?.doc.references).toEqual(['https://avd.aquasec.com/misconfig/ds029']);
  });

  it('a re-scan resolves a check that now passes and one it no longer lists, and keeps firstObservedAt', async () => {
    const later = rescan('2026-10-12T09:30:00Z', (rows) =>
      withStatus('DS002', 'PASS')(rows).filter((r) => r.ID !== 'DS026'),
    );
    expect(only(await ingest({ 'image.json': later }))).toMatchObject({
      checksFailed: 1,
      checksAdded: 0,
      checksResolved: 2,
    });
    expect((await checks(IMAGE_ID)).map((c) => [c.checkId, c.firstObservedAt, c.lastObservedAt])).toEqual([
      ['AVD-DS-0029', '2026-10-05T09:30:00.500Z', '2026-10-12T09:30:00.000Z'],
    ]);
  });

  it('--no-resolve keeps the failures a scan no longer lists or passes; a scan without it resolves them', async () => {
    expect(only(await ingest({ 'image.json': IMAGE }))).toMatchObject({ checksAdded: 2, checksResolved: 0 });
    const clean = rescan('2026-10-19T09:30:00Z', (rows) => withStatus('DS002', 'PASS')(rows).slice(0, 1));
    expect(only(await ingest({ 'image.json': clean }, { resolve: false }))).toMatchObject({
      checksFailed: 0,
      checksResolved: 0,
    });
    expect(checkKeys(await checks(IMAGE_ID))).toHaveLength(3);
    expect(only(await ingest({ 'image.json': clean }))).toMatchObject({ checksResolved: 3 });
    expect(await checks(IMAGE_ID)).toEqual([]);
  });

  it('a file-system scan attached with --asset keeps its checks when a scanner without checks reports on the asset', async () => {
    const fs = JSON.stringify({ ...(JSON.parse(IMAGE) as Json), ArtifactType: 'filesystem', ArtifactName: '.' });
    expect(only(await ingest({ 'fs.json': fs }, { assetId: A1 }))).toMatchObject({ assetId: A1, checksAdded: 3 });
    const grype = read('ingest/grype/grype-dir-v024.json');
    expect(only(await ingest({ 'grype.json': grype }, { assetId: A1 }))).toMatchObject({ checksResolved: 0 });
    expect(checkKeys(await checks(A1))).toEqual([`${A1} AVD-DS-0029`, `${A1} DS002`, `${A1} DS026`]);
  });

  it('a misconfiguration without ID or AVDID is refused with its path, and nothing is written', async () => {
    const before = await checks();
    const bad = rescan('2026-10-26T09:30:00Z', (rows) => [...rows, { Title: 'no id', Status: 'FAIL' }]);
    const result = await ingest({ 'image.json': bad });
    expect(result.problems).toEqual([
      {
        file: 'image.json',
        path: '$.Results[1].Misconfigurations[5].ID',
        message: 'is required (a non-empty string), or AVDID',
      },
    ]);
    expect(await checks()).toEqual(before);
  });
});

describe('a Trivy Kubernetes report (minikube: misconfigurations only)', () => {
  const cluster = (kind: string, name: string) =>
    `sirn:assets:${TENANT_A}:kubernetes:${kind === 'Role' ? 'rbac' : 'core'}:${kind.toLowerCase()}:global:minikube/default/${kind}/${name}`;
  const ROLE = cluster('Role', 'caas-scanners-role');

  it('stores every resource its failed checks', async () => {
    const file = only(await ingest({ 'minikube.json': MINIKUBE }));
    expect(file).toMatchObject({ assets: 13, added: 0, checksFailed: 37, checksAdded: 37 });
    const role = await checks(ROLE);
    expect(role).toHaveLength(14);
    expect(role.find((c) => c.checkId === 'KSV117')?.doc).toMatchObject({
      source: 'trivy',
      title: 'Prevent binding to privileged ports',
      severity: 'HIGH',
    });
    expect(checkKeys(await checks(cluster('Service', 'httpbin')))).toEqual([`${cluster('Service', 'httpbin')} KSV116`]);
  });

  it('a report of one resource resolves its checks that pass or are gone, and leaves the other resources', async () => {
    const report = JSON.parse(MINIKUBE) as { Resources: Json[] };
    const role = report.Resources.find((r) => r.Name === 'caas-scanners-role') as { Results: Json[] };
    const rows = (role.Results[0] as { Misconfigurations: Json[] }).Misconfigurations;
    (role.Results[0] as Json).Misconfigurations = rows
      .filter((r) => r.ID !== 'KSV117')
      .map((r) => (r.ID === 'KSV001' ? { ...r, Status: 'PASS' } : r));
    const file = only(await ingest({ 'role.json': JSON.stringify({ ...report, Resources: [role] }) }));
    expect(file).toMatchObject({ assets: 1, checksFailed: 12, checksAdded: 0, checksResolved: 2 });
    const left = (await checks(ROLE)).map((c) => c.checkId);
    expect(left).toHaveLength(12);
    expect(left).not.toContain('KSV117');
    expect(left).not.toContain('KSV001');
    expect(await checks()).toHaveLength(3 + 35);
  });
});
