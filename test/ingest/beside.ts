// For tests of writes that run beside each other: a minimal Trivy image report, report texts as sources, and an ingest
// of them into a tenant at a fixed time, telling what it waited for.
import { Readable } from 'node:stream';
import { ingestFiles, type IngestResult } from '../../src/ingest/ingest.js';
import type { Storage, WaitReason } from '../../src/storage/index.js';

/** A Trivy report of an ECR image `app` (which names its cloud and region) with a HIGH finding per CVE. */
export const trivyImage = (app: string, cves: readonly string[]): string =>
  JSON.stringify({
    SchemaVersion: 2,
    CreatedAt: '2026-11-20T00:00:00Z',
    ArtifactName: `123456789012.dkr.ecr.us-east-1.amazonaws.com/${app}:1.0`,
    ArtifactType: 'container_image',
    Metadata: { RepoDigests: [`123456789012.dkr.ecr.us-east-1.amazonaws.com/${app}@sha256:${'ab'.repeat(32)}`] },
    Results: [
      {
        Target: 'app',
        Class: 'lang-pkgs',
        Type: 'jar',
        Vulnerabilities: cves.map((id) => ({
          VulnerabilityID: id,
          PkgName: 'org.example:lib',
          InstalledVersion: '1.0.0',
          Severity: 'HIGH',
          Title: `a flaw (${id})`,
        })),
      },
    ],
  });

export interface TextSource {
  name: string;
  open: () => Readable;
}
export const textSource = (name: string, body: string): TextSource => ({
  name,
  open: () => Readable.from([Buffer.from(body)]),
});

export const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export const ingestInto = (
  storage: Storage,
  tenantId: string,
  sources: TextSource[],
  onWait?: (reason: WaitReason) => void,
): Promise<IngestResult> =>
  ingestFiles(storage, sources, {
    tenantId,
    format: 'auto',
    resolve: true,
    dryRun: false,
    now: () => new Date('2026-11-20T10:00:00Z'),
    onWait,
  });
