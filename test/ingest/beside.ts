// For tests of writes that run beside each other: a minimal Trivy image report, report texts as sources, an ingest of
// them into a tenant at a fixed time (telling what it waited for), a database set up for them, and an ingest held
// inside its transaction.
import { PassThrough, Readable } from 'node:stream';
import { sql, type Kysely } from 'kysely';
import { ingestFiles, type IngestResult } from '../../src/ingest/ingest.js';
import { connect } from '../../src/storage/db/connect.js';
import type { Storage, WaitReason } from '../../src/storage/index.js';
import type { Database } from '../../src/storage/db/tables.js';
import { openTestStorage, type TestStorage } from '../helpers.js';

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

/**
 * A PostgreSQL test database whose tenants already hold a finding, with a session kept open beside the writes, as a
 * running server keeps one. Alone with the database, a write that fills an empty table takes it whole until it
 * commits (docs/DESIGN.md §42), and every other write would wait for it whatever the turns.
 */
export async function besideDatabase(
  tenants: readonly [tenantId: string, organizationId: string][],
): Promise<{ t: TestStorage; db: Kysely<Database>; close: () => Promise<void> }> {
  const t = await openTestStorage('postgres');
  const { db } = await connect(t.url);
  await sql`select 1`.execute(db);
  for (const [tenantId, organizationId] of tenants) {
    await t.storage.createTenant({ tenantId, organizationId, name: tenantId.slice(0, 8) });
    const zero = await ingestInto(t.storage, tenantId, [
      textSource('zero.json', trivyImage('zero', ['CVE-2026-0000'])),
    ]);
    if (zero.problems.length > 0) throw new Error(JSON.stringify(zero.problems));
  }
  return {
    t,
    db,
    close: async () => {
      await db.destroy();
      await t.dispose();
    },
  };
}

/**
 * An ingest held inside its transaction: its first report is written (the feeds and the tenant's state read as they
 * were), then it waits for the bytes of a second report until `release` gives them.
 */
export async function heldIngest(
  storage: Storage,
  tenantId: string,
  first: TextSource,
): Promise<{ running: Promise<IngestResult>; release: (second: string) => void }> {
  const second = new PassThrough();
  let opened!: () => void;
  const written = new Promise<void>((resolve) => (opened = resolve));
  const running = ingestInto(storage, tenantId, [
    first,
    {
      name: 'second.json',
      open: () => {
        opened();
        return second;
      },
    },
  ]);
  await written;
  return { running, release: (body) => second.end(body) };
}
