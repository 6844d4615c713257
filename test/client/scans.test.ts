// The typed client's scans (src/client/index.ts `scans`) against a real server: a scan's changes in batches, and the
// wait for a scan to end, which looks again soon after an upload and further apart after.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createClient, SecinvConnectionError, type Change } from '../../src/client/index.js';
import { scanRunner } from '../../src/ingest/scan-runner.js';
import { createKey } from '../helpers.js';
import { ingestTexts } from '../ingest/run.js';
import { sharedServer } from './server.js';

const server = sharedServer();
const client = (key = server.keys[0]) => createClient({ baseUrl: server.url, apiKey: key, timeoutMs: 20_000 });
const tenant = () => server.tenants[0];

async function collect(iterator: AsyncIterable<Change>): Promise<Change[]> {
  const items: Change[] = [];
  for await (const item of iterator) items.push(item);
  return items;
}

describe('scans', () => {
  it('scans.changes: the changes one scan made, in batches', async () => {
    const report = readFileSync(
      new URL('../fixtures/ingest/trivy/trivy-image-teamdojo-multi-target.json', import.meta.url),
      'utf8',
    );
    const result = await ingestTexts(
      server.storage,
      { 'teamdojo.json': report },
      { tenantId: tenant(), provider: 'AWS', region: 'us-east-1', recordScans: true },
    );
    expect(result.problems).toEqual([]);
    const [scan] = (await client().scans.list({ perPage: 1 })).data;
    const first = await client().scans.changes(scan!.id, { perPage: 3 });
    expect(first.data).toHaveLength(3);
    const rest = await client().scans.changes(scan!.id, { cursor: first.meta.cursor, perPage: 1000 });
    const diff = [...first.data, ...rest.data];
    expect(diff.every((c) => c.cause.kind === 'scan' && c.cause.scanId === scan!.id)).toBe(true);
    expect(diff.filter((c) => c.type === 'finding.opened').map((c) => c.vulnerabilityId)).toEqual([
      'CVE-2018-11771',
      'CVE-2018-1324',
      'CVE-2019-12900',
      'CVE-2020-15999',
      'CVE-2020-28196',
    ]);
    const log = await collect(client().changes.all());
    expect(diff).toEqual(log.filter((c) => c.cause.scanId === scan!.id));
    await expect(client().scans.changes('5f0c6f57-6d1b-4b8f-9d55-3f7d0b0e7a11')).rejects.toMatchObject({
      status: 404,
      code: 'not_found',
    });
  });

  it('scans.wait: gives up at its timeout on a scan still queued; its first looks come soon, whatever intervalMs', async () => {
    const uploader = client(await createKey(server.storage, tenant(), { scopes: ['read', 'ingest'] }));
    const report = readFileSync(
      new URL('../fixtures/ingest/trivy/trivy-image-example-app-all-statuses.json', import.meta.url),
    );
    const queued = await uploader.scans.upload(report, { provider: 'AWS', region: 'eu-west-3' });
    expect(queued.status).toBe('queued');
    // This server applies no scan by itself: the scan stays queued until the runner below applies it.
    const gaveUp = await uploader.scans.wait(queued.id, { timeoutMs: 300 }).catch((error: unknown) => error);
    expect(gaveUp).toBeInstanceOf(SecinvConnectionError);
    expect((gaveUp as Error).message).toBe(`scan ${queued.id} is still queued after 300 ms`);
    // At most ten minutes between two looks: only the first, closer ones can see the scan end within the test.
    const waited = uploader.scans.wait(queued.id, { intervalMs: 600_000 });
    await scanRunner(server.storage, { owner: 'test', leaseMs: 60_000, pollMs: 600_000 }).drain();
    const scan = await waited;
    expect(scan).toMatchObject({ id: queued.id, status: 'succeeded' });
    expect(scan.summary?.findings.added).toBeGreaterThan(0);
  });
});
