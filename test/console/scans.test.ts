// The console's scan list end to end, in Chromium, against `secinv serve` in a process of its own: scans made by real
// uploads (an ingest key, applied by the server's scan thread) and by `secinv ingest`, read with a read key, newest
// first, with a succeeded scan's counts and a failed one's problem, filtered by status, in cursor batches. The page
// passes axe-core with no serious or critical violation under the console's content security policy.
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Scan } from '../../src/client/index.js';
import { runCli } from '../cli/run.js';
import { createTestDatabase } from '../helpers.js';
import { exitCodeAfter, spawnServe } from '../http/serve-process.js';
import { launch, type Browser } from './browser.js';
import { checkPage } from './check.js';

const TRIVY = fileURLToPath(
  new URL('../fixtures/ingest/trivy/trivy-image-example-app-all-statuses.json', import.meta.url),
);
const TEAMDOJO = fileURLToPath(
  new URL('../fixtures/ingest/trivy/trivy-image-teamdojo-multi-target.json', import.meta.url),
);
/** Bodies that are not reports, uploaded to end `failed`: more than a batch of 25 scans in all. */
const NOT_REPORTS = 25;

let drop: () => Promise<void>;
let server: ChildProcess;
let base: string;
let readKey: string;
let ingestKey: string;
let browser: Browser;

const cli = async (...argv: string[]): Promise<string> => {
  const result = await runCli(...argv);
  expect(result.code, result.stderr).toBe(0);
  return result.stdout.trim();
};

/** The API's list with the read key. */
async function apiScans(query: string): Promise<{ data: Scan[]; meta: { cursor: string | null } }> {
  const res = await fetch(`${base}/v1/tenant/scans?${query}`, { headers: { authorization: `Bearer ${readKey}` } });
  expect(res.status).toBe(200);
  return (await res.json()) as { data: Scan[]; meta: { cursor: string | null } };
}

async function upload(body: Buffer, query: string): Promise<void> {
  const res = await fetch(`${base}/v1/tenant/scans?${query}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ingestKey}`, 'content-type': 'application/json' },
    body,
  });
  expect(res.status).toBe(202);
}

beforeAll(async () => {
  const database = await createTestDatabase('sqlite', { migrated: true });
  drop = database.drop;
  const db = database.url;
  const tenant = await cli('tenants', 'create', '--name', 'console-scans', '--db', db);
  readKey = await cli('keys', 'create', '--tenant', tenant, '--db', db);
  ingestKey = await cli('keys', 'create', '--tenant', tenant, '--scope', 'ingest', '--db', db);
  // The oldest scan: a run of `secinv ingest`.
  await cli('ingest', '--tenant', tenant, '--provider', 'GCP', '--region', 'europe-west1', '--db', db, TEAMDOJO);
  const served = await spawnServe(db);
  server = served.child;
  base = `http://127.0.0.1:${served.port}`;
  for (let i = 0; i < NOT_REPORTS; i += 1) await upload(Buffer.from(`{"upload": ${i}}`), `name=not-a-report-${i}.json`);
  // The newest: a report the server applies.
  await upload(readFileSync(TRIVY), 'name=app.json&provider=AWS&region=us-east-1');
  for (;;) {
    const { data } = await apiScans('statuses=queued,running&perPage=1');
    if (data.length === 0) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  browser = await launch();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  if (server?.exitCode === null) await exitCodeAfter(server, 'SIGTERM');
  await drop?.();
});

const check = (name: string): Promise<void> => checkPage(browser, name);

/** The table's rows as text, cell by cell. */
const rows = (): Promise<string[][]> =>
  browser.page.evaluate(
    `[...document.querySelectorAll('tbody tr:not(.details-row)')].map((tr) => [...tr.cells].map((td) => td.innerText.trim()))`,
  );

/** A scan's row as the console should show it: status, name, format, then its counts or its first problem. */
const expectedRow = (scan: Scan): string[] => {
  const summary = scan.summary;
  const counts = summary
    ? [
        String(summary.findings.added),
        String(summary.findings.resolved),
        String(summary.assets.created + summary.assets.updated + summary.assets.unchanged),
      ]
    : ['—', '—', '—'];
  return [scan.status, scan.name ?? 'unnamed', scan.format ?? '—', ...counts, scan.problems[0]?.message ?? ''];
};
/** The cells expectedRow speaks of (not the times, whose text is the console's own). */
const compared = (cells: string[]): string[] => [...cells.slice(0, 3), ...cells.slice(5)];

describe('the scans page in Chromium', { timeout: 60_000 }, () => {
  it('lists the scans newest first with a read key: counts of a succeeded one, the problem of a failed one', async () => {
    const { page } = browser;
    await page.goto(`${base}/console/`);
    await page.getByLabel('Tenant API key').fill(readKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('[data-ready]').waitFor();
    await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Scans' }).click();
    await page.locator('[data-shown]').waitFor();
    expect(page.url()).toBe(`${base}/console/scans`);

    const api = await apiScans('perPage=25');
    expect(api.data).toHaveLength(25);
    const shown = await rows();
    expect(shown.map(compared)).toEqual(api.data.map(expectedRow));
    // The newest is the report the server applied, with what it changed.
    const newest = api.data[0]!;
    expect(newest).toMatchObject({ status: 'succeeded', name: 'app.json', format: 'trivy' });
    expect(newest.summary!.findings.added).toBeGreaterThan(0);
    expect(shown[0]![5]).toBe(String(newest.summary!.findings.added));
    // The next, a body that is not a report, with the message secinv ingest prints.
    expect(shown[1]![0]).toBe('failed');
    expect(shown[1]![8]).toContain('is JSON but not a report secinv reads');
    expect(await page.locator('tbody time').first().getAttribute('datetime')).toBe(newest.submittedAt);

    // A scan opens to its details.
    await page.getByRole('button', { name: 'app.json' }).click();
    await page.getByRole('heading', { name: 'Assets' }).waitFor();
    expect(await page.locator(`#scan-${newest.id}`).textContent()).toContain(newest.sha256);
    await check('scans');
  });

  it('pages in cursor batches: the next batch holds the oldest scans, the previous goes back', async () => {
    const { page } = browser;
    const firstBatch = await rows();
    await page.getByRole('button', { name: 'Next batch →' }).click();
    await expect.poll(async () => (await rows())[0]?.[1]).not.toBe(firstBatch[0]![1]);
    const api = await apiScans('perPage=25');
    const rest = await apiScans(`perPage=25&cursor=${encodeURIComponent(api.meta.cursor!)}`);
    expect(rest.data.map((s) => s.name)).toEqual(['not-a-report-0.json', 'trivy-image-teamdojo-multi-target.json']);
    expect((await rows()).map(compared)).toEqual(rest.data.map(expectedRow));
    // `secinv ingest`'s run: succeeded, its counts shown.
    expect(rest.data[1]).toMatchObject({ status: 'succeeded', keyId: null, format: 'trivy' });
    expect(await page.getByRole('button', { name: 'Next batch →' }).count()).toBe(0);
    await page.getByRole('button', { name: '← Previous batch' }).click();
    await expect.poll(async () => (await rows()).map((r) => r[1])).toEqual(firstBatch.map((r) => r[1]));
  });

  it('filters by status: the address holds the filter, the rows are those the API lists', async () => {
    const { page } = browser;
    await page.getByRole('group', { name: 'Status' }).getByLabel('succeeded').check();
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/statuses=succeeded/);
    const api = await apiScans('statuses=succeeded');
    expect(api.data.map((s) => s.name)).toEqual(['app.json', 'trivy-image-teamdojo-multi-target.json']);
    await expect.poll(async () => (await rows()).map(compared)).toEqual(api.data.map(expectedRow));
    expect(await page.getByRole('button', { name: 'Next batch →' }).count()).toBe(0);
    await check('scans-succeeded');

    // Reloaded, the same view.
    await page.reload();
    await expect.poll(async () => (await rows()).length).toBe(2);
    expect(await page.getByRole('group', { name: 'Status' }).getByLabel('succeeded').isChecked()).toBe(true);
  });
});
