// `secinv push` against a real `secinv serve` (pipeline.md §3): uploads with an ingest key, waits, and gates: exit 1
// on a report with a KEV finding under --fail-on kev, 0 on a clean one, 3 for a scan that failed, 4 for no server.
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, freePort, openStorageWithKeys, TENANT_A, type TestStorage } from '../helpers.js';
import { fixture } from '../fixtures.js';
import { exitCodeAfter, spawnServe } from '../http/serve-process.js';
import { runCli } from './run.js';

const file = (path: string) => fileURLToPath(new URL(`../fixtures/ingest/${path}`, import.meta.url));
const KEV = file('kev/known_exploited_vulnerabilities.2025.01.24.excerpt.json');
/** Holds CVE-2020-15999, which the KEV excerpt lists. */
const WITH_KEV = file('trivy/trivy-image-teamdojo-multi-target.json');
const CLEAN = file('trivy/trivy-image-example-app-all-statuses.json');

let admin: TestStorage;
let server: ChildProcess;
let url: string;
let ingestKey: string;
let bothKey: string;
beforeAll(async () => {
  ({ opened: admin } = await openStorageWithKeys(fixture, [TENANT_A]));
  expect((await runCli('feeds', 'load', '--db', admin.url, KEV)).code).toBe(0);
  ingestKey = await createKey(admin.storage, TENANT_A, { scopes: ['ingest'] });
  bothKey = await createKey(admin.storage, TENANT_A, { scopes: ['read', 'ingest'] });
  const { child, port } = await spawnServe(admin.url);
  server = child;
  url = `http://127.0.0.1:${port}`;
}, 60_000);
afterAll(async () => {
  await exitCodeAfter(server, 'SIGTERM');
  await admin.dispose();
});

const push = (key: string, ...args: string[]) =>
  runCli('push', '--url', url, '--key', key, '--provider', 'AWS', '--region', 'us-east-1', ...args);

describe('secinv push', () => {
  it('uploads and prints each scan; --fail-on kev exits 1 on a KEV finding, listing it when the key reads', async () => {
    const clean = await push(ingestKey, '--fail-on', 'kev', CLEAN);
    expect(clean.stderr).not.toContain('hit a rule');
    expect(clean.code).toBe(0);
    expect(clean.stdout).toMatch(
      /^[0-9a-f-]{36} queued .*\n[0-9a-f-]{36} succeeded trivy-image-example-app-all-statuses\.json\n$/,
    );

    const hit = await push(bothKey, '--fail-on', 'kev,added:CRITICAL', WITH_KEV);
    expect(hit.code).toBe(1);
    expect(hit.stderr).toMatch(/RULE\s+FINDINGS\s+SCAN\nkev\s+1\s+trivy-image-teamdojo-multi-target\.json/);
    expect(hit.stderr).toMatch(/CVE-2020-15999\s+\w+\s+\S+\s+sirn:/);
    expect(hit.stderr).toContain('secinv: --fail-on: 1 of 1 scan hit a rule');

    // The image in another region with an upload-only key: counted, not listed.
    const again = await runCli(
      'push',
      '--url',
      url,
      '--key',
      ingestKey,
      '--provider',
      'AWS',
      '--region',
      'eu-west-1',
      '--fail-on',
      'kev',
      WITH_KEV,
    );
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('(the key has no read scope: the findings themselves are not listed)');
  });

  it('a scan that fails is exit 3 with its problems; bad rules exit 2; no server exit 4; a read key exit 1', async () => {
    const failed = await push(ingestKey, '--wait', KEV);
    expect(failed.code).toBe(3);
    expect(failed.stderr).toContain('is the CISA KEV catalog, a feed: load it with `secinv feeds load`');
    expect((await push(ingestKey, '--fail-on', 'open:SEVERE', CLEAN)).code).toBe(2);
    const nowhere = await runCli('push', '--url', `http://127.0.0.1:${await freePort()}`, '--key', ingestKey, CLEAN);
    expect(nowhere.code).toBe(4);
    const readOnly = await runCli('push', '--url', url, '--key', await createKey(admin.storage, TENANT_A), CLEAN);
    expect(readOnly.code).toBe(1);
    expect(readOnly.stderr).toContain("lacks the 'ingest' scope");
    // The key is never printed.
    for (const result of [failed, nowhere, readOnly]) expect(result.stdout + result.stderr).not.toContain(ingestKey);
  });
});
