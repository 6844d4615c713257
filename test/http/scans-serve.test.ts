// Scans on a real `secinv serve` (pipeline.md §2): a report of every format uploaded over HTTP with an ingest key,
// applied by the server's own scan thread while it keeps answering, and read back through a read key.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { sql, type Kysely } from 'kysely';
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixture } from '../fixtures.js';
import type { Database } from '../../src/storage/db/tables.js';
import { connect } from '../../src/storage/db/connect.js';
import { createKey, openStorageWithKeys, TENANT_A, type TestStorage } from '../helpers.js';
import { exitCodeAfter, spawnServe } from './serve-process.js';

const report = (path: string) => readFileSync(new URL(`../fixtures/ingest/${path}`, import.meta.url));

/** One real report of each format, with the options `secinv ingest` would need for it (`ASSET`: the first's asset). */
const REPORTS: { format: string; file: string; query: string }[] = [
  { format: 'trivy', file: 'trivy/trivy-image-example-app-all-statuses.json', query: 'provider=AWS&region=us-east-1' },
  { format: 'grype', file: 'grype/grype-image-busybox-epss.json', query: 'provider=AWS&region=us-east-1' },
  { format: 'cyclonedx', file: 'cyclonedx/cdx-sbom-1.7-trivy-npm-with-vulns.json', query: 'assetId=ASSET' },
  { format: 'openvex', file: 'openvex/openvex-vexctl-demo.json', query: '' },
  { format: 'prowler-ocsf', file: 'assets/prowler-ocsf-azure.json', query: '' },
  { format: 'trivy-k8s', file: 'trivy-k8s/trivy-k8s-minikube-resources.json', query: '' },
  { format: 'trivy-operator', file: 'trivy-k8s/trivy-operator-vulnreport-many.json', query: 'cluster=prod-eu' },
];

let admin: TestStorage;
let server: ChildProcess;
let base: string;
let readKey: string;
let ingestKey: string;
let rawDb: Kysely<Database>;
beforeAll(async () => {
  ({
    opened: admin,
    keys: [readKey],
  } = await openStorageWithKeys(fixture, [TENANT_A]));
  ingestKey = await createKey(admin.storage, TENANT_A, { scopes: ['ingest'] });
  ({ db: rawDb } = await connect(admin.url));
  const { child, port } = await spawnServe(admin.url);
  server = child;
  base = `http://127.0.0.1:${port}`;
}, 60_000);
afterAll(async () => {
  await exitCodeAfter(server, 'SIGTERM');
  await rawDb.destroy();
  await admin.dispose();
});

const get = async (key: string, path: string) => {
  const response = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${key}` } });
  return { status: response.status, body: (await response.json()) as { data: Record<string, unknown> } };
};

/** Polls the scan until it ended. */
async function ended(location: string): Promise<Record<string, unknown>> {
  for (;;) {
    const { body } = await get(ingestKey, location);
    if (body.data.status === 'succeeded' || body.data.status === 'failed') return body.data;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('scans on secinv serve', () => {
  it('a client that disconnects mid-upload leaves no scan and no bytes', async () => {
    const before = (await get(readKey, '/v1/tenant/scans?perPage=100')).body.data as unknown as unknown[];
    const body = report(REPORTS[0]!.file);
    await new Promise<void>((resolve) => {
      const request = httpRequest(`${base}/v1/tenant/scans?${REPORTS[0]!.query}`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${ingestKey}`,
          'content-type': 'application/json',
          'content-length': String(body.length),
        },
      });
      request.on('error', () => resolve());
      request.write(body.subarray(0, Math.floor(body.length / 2)), () => {
        // Let the server read what was sent, then go away without the rest.
        setTimeout(() => {
          request.destroy();
          resolve();
        }, 200);
      });
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const after = (await get(readKey, '/v1/tenant/scans?perPage=100')).body.data as unknown as unknown[];
    expect(after.length).toBe(before.length);
    if (admin.url.startsWith('sqlite:')) {
      const spool = `${admin.url.slice('sqlite:'.length)}-scans`;
      expect(existsSync(spool) ? readdirSync(spool) : []).toEqual([]);
    } else {
      const { rows } = await sql<{ n: number }>`select count(*)::int as n from scan_bodies`.execute(rawDb);
      expect(rows[0]!.n).toBe(0);
    }
  });

  it('applies an upload of every format, and what each wrote is served to a read key', async () => {
    let first = '';
    for (const { format, file, query } of REPORTS) {
      const options = query.replace('ASSET', encodeURIComponent(first));
      const response = await fetch(`${base}/v1/tenant/scans?name=${encodeURIComponent(file)}&${options}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ingestKey}`, 'content-type': 'application/json' },
        body: report(file),
      });
      expect(response.status, file).toBe(202);
      const scan = await ended(response.headers.get('location')!);
      expect({ file, status: scan.status, format: scan.format, problems: scan.problems }).toEqual({
        file,
        status: 'succeeded',
        format,
        problems: [],
      });
      const { assetIds } = scan.summary as { assetIds: string[] };
      first ||= assetIds[0]!;
      for (const assetId of assetIds) {
        const asset = await get(readKey, `/v1/tenant/assets/${encodeURIComponent(assetId)}`);
        expect(asset.status, `${file} ${assetId}`).toBe(200);
      }
    }
    const listed = await get(readKey, '/v1/tenant/scans?statuses=succeeded&perPage=100');
    expect((listed.body.data as unknown as unknown[]).length).toBe(REPORTS.length);
  }, 120_000);
});
