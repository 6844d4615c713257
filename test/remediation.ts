// A tenant's remediation history built by real writes at set times (pipeline.md §6): scans of one image on known days
// open, resolve and reopen findings. test/storage/remediation/rollup.test.ts checks every day of it.
import { expect } from 'vitest';
import type { Storage } from '../src/storage/index.js';
import { importRecords } from './helpers.js';
import { ingestTexts } from './ingest/run.js';
import { tenantRecord } from './records.js';

/** A Trivy report of the image `app` at `at`, one finding per CVE with its severity. */
export const report = (at: string, cves: Record<string, string>): string =>
  JSON.stringify({
    SchemaVersion: 2,
    CreatedAt: at,
    ArtifactName: '123456789012.dkr.ecr.us-east-1.amazonaws.com/app:1.0',
    ArtifactType: 'container_image',
    Metadata: { RepoDigests: [`123456789012.dkr.ecr.us-east-1.amazonaws.com/app@sha256:${'ab'.repeat(32)}`] },
    Results: [
      {
        Target: 'app',
        Class: 'lang-pkgs',
        Type: 'jar',
        Vulnerabilities: Object.entries(cves).map(([id, severity]) => ({
          VulnerabilityID: id,
          PkgName: 'org.example:lib',
          InstalledVersion: '1.0.0',
          Severity: severity,
        })),
      },
    ],
  });

/** The scans of the story: C1, C2 CRITICAL, H1 HIGH, L1 LOW on Jan 1; C1 fixed by Jan 6 (C3 new), … */
export const STORY: [at: string, cves: Record<string, string>][] = [
  [
    '2026-01-01T10:00:00.000Z',
    { 'CVE-2026-1001': 'CRITICAL', 'CVE-2026-1002': 'CRITICAL', 'CVE-2026-2001': 'HIGH', 'CVE-2026-3001': 'LOW' },
  ],
  [
    '2026-01-06T10:00:00.000Z',
    { 'CVE-2026-1002': 'CRITICAL', 'CVE-2026-1003': 'CRITICAL', 'CVE-2026-2001': 'HIGH', 'CVE-2026-3001': 'LOW' },
  ],
  ['2026-01-20T10:00:00.000Z', { 'CVE-2026-1003': 'CRITICAL', 'CVE-2026-2001': 'HIGH', 'CVE-2026-3001': 'LOW' }],
  ['2026-02-10T10:00:00.000Z', { 'CVE-2026-1001': 'CRITICAL', 'CVE-2026-3001': 'LOW' }],
];

export async function tellStory(storage: Storage): Promise<void> {
  expect((await importRecords(storage, [tenantRecord()])).problems).toEqual([]);
  for (const [at, cves] of STORY) {
    const result = await ingestTexts(storage, { 'app.json': report(at, cves) }, { now: () => new Date(at) });
    expect(result.problems).toEqual([]);
  }
}
