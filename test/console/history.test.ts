// An asset's history on its console page, in Chromium, against `secinv serve` in a process of its own: an image whose
// findings a `secinv ingest` opened (the scan as cause, linking to the scans) and a KEV load then marked (the feed as
// cause, hasKev false → true), newest first as the change log has them; and an asset with more changes than the page
// shows, its last ones with a note of how many there are. The page passes axe-core under the content security policy.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Change } from '../../src/client/index.js';
import { openStorage } from '../../src/storage/index.js';
import { runCli } from '../cli/run.js';
import { kevCatalog } from '../feeds/kev-catalog.js';
import { createKey, createTestDatabase, importRecords } from '../helpers.js';
import { exitCodeAfter, spawnServe } from '../http/serve-process.js';
import { assetRecord, findingRecord, tenantRecord, TENANT_A } from '../records.js';
import { launch, type Browser } from './browser.js';
import { checkPage } from './check.js';

const TEAMDOJO = fileURLToPath(
  new URL('../fixtures/ingest/trivy/trivy-image-teamdojo-multi-target.json', import.meta.url),
);
const IMAGE = `sirn:assets:${TENANT_A}:aws:ecr:image:us-east-1:teamdojo:latest`;
/** An asset imported with more findings than the history shows (100). */
const BUSY = `sirn:assets:${TENANT_A}:aws:s3:bucket:busy`;
const BUSY_FINDINGS = 104;

let drop: () => Promise<void>;
let dir: string;
let server: ChildProcess;
let base: string;
let key: string;
let browser: Browser;

const cli = async (...argv: string[]): Promise<void> => {
  const result = await runCli(...argv);
  expect(result.code, result.stderr).toBe(0);
};

beforeAll(async () => {
  const database = await createTestDatabase('sqlite', { migrated: true });
  drop = database.drop;
  const db = database.url;
  const storage = await openStorage(db);
  try {
    const findings = Array.from({ length: BUSY_FINDINGS }, (_, i) => findingRecord(BUSY, `CVE-2026-${10_000 + i}`));
    const imported = await importRecords(storage, [tenantRecord(TENANT_A), assetRecord(BUSY), ...findings]);
    expect(imported.problems).toEqual([]);
    key = await createKey(storage, TENANT_A);
  } finally {
    await storage.close();
  }
  await cli('ingest', '--tenant', TENANT_A, '--provider', 'AWS', '--region', 'us-east-1', '--db', db, TEAMDOJO);
  dir = mkdtempSync(join(tmpdir(), 'secinv-history-'));
  const kev = join(dir, 'kev.json');
  writeFileSync(kev, kevCatalog('2026.11.20', ['CVE-2020-15999']));
  await cli('feeds', 'load', '--db', db, kev);
  const served = await spawnServe(db);
  server = served.child;
  base = `http://127.0.0.1:${served.port}`;
  browser = await launch();
  await browser.page.goto(`${base}/console/`);
  await browser.page.getByLabel('Tenant API key').fill(key);
  await browser.page.getByRole('button', { name: 'Sign in' }).click();
  await browser.page.locator('[data-ready]').waitFor();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  if (server?.exitCode === null) await exitCodeAfter(server, 'SIGTERM');
  await drop?.();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Every change of the asset, in log order, asked directly of the API. */
async function apiChanges(assetId: string): Promise<Change[]> {
  const res = await fetch(`${base}/v1/tenant/changes?perPage=1000&assetIds=${encodeURIComponent(assetId)}`, {
    headers: { authorization: `Bearer ${key}` },
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { data: Change[] }).data;
}

/** What the history names a change's record by. */
const subject = (c: Change): string => c.vulnerabilityId ?? (c.riskId === null ? 'the asset' : `risk ${c.riskId}`);

/** The history table's rows as text, cell by cell. */
const historyRows = (): Promise<string[][]> =>
  browser.page.evaluate(
    `[...([...document.querySelectorAll('table')].find((t) => t.caption?.textContent?.startsWith('Changes of this asset'))?.tBodies[0]?.rows ?? [])]
      .map((tr) => [...tr.cells].map((td) => td.innerText.trim()))`,
  );

const openAsset = async (id: string): Promise<number> => {
  await browser.page.goto(`${base}/console/assets/${encodeURIComponent(id)}`);
  const note = browser.page.locator('[data-history]');
  await note.waitFor();
  return Number(await note.getAttribute('data-history'));
};

describe("an asset's history in Chromium", { timeout: 60_000 }, () => {
  it('shows what the ingest opened, with its scan, and what the KEV load changed, with the feed, newest first', async () => {
    const changes = await apiChanges(IMAGE);
    expect(await openAsset(IMAGE)).toBe(changes.length);
    const rows = await historyRows();
    // Newest first: the log reversed, each row its change's type and subject.
    expect(rows.map((r) => r[1])).toEqual(changes.map((c) => c.type).reverse());
    expect(rows.map((r) => r[2])).toEqual(changes.map(subject).reverse());

    // The KEV load: the finding marked, the asset's score moved, a risk opened; the feed and its version as cause.
    const kev = rows.slice(0, 3).map((r) => r.slice(1));
    expect(kev).toContainEqual(['finding.updated', 'CVE-2020-15999', 'hasKev: false → true', 'feed kev 2026.11.20']);
    const rescored = changes.find((c) => c.type === 'asset.updated')!;
    const score = rescored.fields.find((f) => f.name === 'riskScore')!;
    expect(kev).toContainEqual([
      'asset.updated',
      'the asset',
      `riskScore: ${String(score.before)} → ${String(score.after)}`,
      'feed kev 2026.11.20',
    ]);

    const scanId = changes[0]!.cause.scanId!;
    expect(changes[0]).toMatchObject({ type: 'asset.created', cause: { kind: 'scan' } });
    const opened = rows.find((r) => r[1] === 'finding.opened' && r[2] === 'CVE-2018-11771')!;
    expect(opened[3]).toBe('—');
    expect(opened[4]).toBe(`scan ${scanId}`);
    expect(rows.at(-1)!.slice(1)).toEqual(['asset.created', 'the asset', '—', `scan ${scanId}`]);
    const time = browser.page
      .getByRole('table', { name: /^Changes of this asset/ })
      .locator('time')
      .last();
    expect(await time.getAttribute('datetime')).toBe(changes[0]!.at);
    await checkPage(browser, 'asset-history');

    // The scan links to the scans.
    await browser.page.getByRole('link', { name: scanId }).first().click();
    await browser.page.waitForURL(`${base}/console/scans`);
  });

  it('an asset with more changes than it shows: the last 100, newest first, saying how many there are', async () => {
    const changes = await apiChanges(BUSY);
    expect(changes).toHaveLength(BUSY_FINDINGS + 1);
    expect(await openAsset(BUSY)).toBe(changes.length);
    expect(await browser.page.locator('[data-history]').textContent()).toBe(
      `The last 100 of ${changes.length} changes, newest first.`,
    );
    const rows = await historyRows();
    expect(rows.map((r) => r[2])).toEqual(changes.slice(-100).map(subject).reverse());
    expect(rows.every((r) => r[4] === 'import')).toBe(true);
  });
});
