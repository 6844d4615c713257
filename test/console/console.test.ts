// The web console end to end, in Chromium, against `secinv serve` in a process of its own over a generated tenant:
// sign in, the overview, risks filtered by severity (the count is the API's total), an asset's page, pages of
// findings, the errors a person meets (a refused key, a 400, a server that is gone), sign-out. Every page passes an
// axe-core audit with no serious or critical violation, under the console's strict content security policy (a
// blocked script or style fails the test). Screenshots of each page go to test-results/console/.
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateRecords } from '../../src/generate/generator.js';
import { importSources } from '../../src/import/importer.js';
import { openStorage } from '../../src/storage/index.js';
import { createKey, createTestDatabase } from '../helpers.js';
import { exitCodeAfter, spawnServe } from '../http/serve-process.js';
import { launch, type Browser } from './browser.js';
import { checkPage } from './check.js';

let drop: () => Promise<void>;
let server: ChildProcess;
let base: string;
let key: string;
let browser: Browser;

beforeAll(async () => {
  const database = await createTestDatabase('sqlite');
  drop = database.drop;
  const storage = await openStorage(database.url);
  try {
    const lines = [...generateRecords({ seed: 'console', tenants: 1, assets: 120, findingsPerAsset: 6, risks: 80 })];
    const result = await importSources(
      storage,
      [{ name: 'generated', open: () => Readable.from([Buffer.from(lines.join('\n'))]) }],
      {
        dryRun: false,
      },
    );
    expect(result.problems).toEqual([]);
    key = await createKey(storage, (await storage.listTenants())[0]!.tenantId);
  } finally {
    await storage.close();
  }
  const served = await spawnServe(database.url);
  server = served.child;
  base = `http://127.0.0.1:${served.port}`;
  browser = await launch();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  if (server?.exitCode === null) await exitCodeAfter(server, 'SIGTERM');
  await drop?.();
});

/** `meta.total` of a list, asked directly of the API. */
async function apiTotal(path: string): Promise<number> {
  const res = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${key}` } });
  expect(res.status).toBe(200);
  return ((await res.json()) as { meta: { total: number } }).meta.total;
}

const check = (name: string): Promise<void> => checkPage(browser, name);

const shownTotal = async (): Promise<number> =>
  Number(await browser.page.locator('[data-total]').first().getAttribute('data-total'));

describe('the console in Chromium', { timeout: 60_000 }, () => {
  it('refuses an unknown key, saying so, and signs in with a valid one', async () => {
    const { page } = browser;
    await page.goto(`${base}/console/`);
    await check('sign-in');
    await page.getByLabel('Tenant API key').fill('secinv_not-a-key-of-this-server');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('The server refused this key.');
    await check('sign-in-refused');

    await page.getByLabel('Tenant API key').fill(`Bearer ${key}`);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('[data-ready]').waitFor();
    expect(await page.evaluate('sessionStorage.getItem("secinv.console.key")')).toBe(key);
  });

  it('shows the overview with the API’s counts', async () => {
    const { page } = browser;
    const critical = await apiTotal('/v1/tenant/risks?severityLevels=CRITICAL&lifecycleStates=OPEN&perPage=1');
    const row = page.getByRole('table', { name: 'Open risks' }).getByRole('row', { name: /CRITICAL/ });
    expect(await row.getByRole('link').textContent()).toBe(critical.toLocaleString('en-US'));
    const assets = await apiTotal('/v1/tenant/assets?perPage=1');
    expect(await page.locator('.cards').textContent()).toContain(`${assets} assets`);
    await check('overview');
  });

  it('charts the open findings of the last 90 days by severity, and counts the overdue ones', async () => {
    const { page } = browser;
    const chart = page.getByRole('img', { name: /^Open findings by severity/ });
    await chart.waitFor();
    const drawn = await chart
      .locator('path[data-severity]')
      .evaluateAll((paths) =>
        paths.map((p) => [p.getAttribute('data-severity'), (p.getAttribute('d') ?? '').split('L').length]),
      );
    // One line per severity, a point per day of the 90.
    expect(drawn).toEqual(['CRITICAL', 'HIGH', 'MEDIUM', 'LOW'].map((level) => [level, 90]));
    const res = await fetch(`${base}/v1/tenant/metrics/findings`, { headers: { authorization: `Bearer ${key}` } });
    const last = ((await res.json()) as { data: { severities: Record<string, { open: number }> }[] }).data.at(-1)!;
    const legend = page.getByRole('list', { name: /^Legend/ });
    for (const level of ['CRITICAL', 'HIGH', 'MEDIUM', 'LOW'])
      expect(await legend.locator(`[data-severity="${level}"]`).textContent()).toContain(
        last.severities[level]!.open.toLocaleString('en-US'),
      );

    const overdue = await apiTotal('/v1/tenant/vulnerabilities?isOverdue=true&perPage=1');
    expect(overdue).toBeGreaterThan(0);
    const card = page.locator('.cards a', { hasText: 'overdue findings' });
    expect(await card.locator('.card-figure').textContent()).toBe(overdue.toLocaleString('en-US'));
    await card.click();
    await page.waitForURL(/vulnerabilities\?isOverdue=true$/);
    await expect.poll(shownTotal).toBe(overdue);
    const rows = page.locator('tbody tr:not(.details-row)');
    expect(await rows.count()).toBeGreaterThan(0);
    expect(await rows.filter({ has: page.locator('.flag', { hasText: 'overdue' }) }).count()).toBe(await rows.count());
    await check('vulnerabilities-overdue');
  });

  it('filters risks by severity: the count is the API total, the address holds the filter', async () => {
    const { page } = browser;
    await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Risks' }).click();
    await page.locator('[data-total]').waitFor();
    await page.getByRole('group', { name: 'Severity' }).getByLabel('CRITICAL').check();
    await page.getByRole('group', { name: 'Severity' }).getByLabel('HIGH').check();
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/severityLevels=CRITICAL%2CHIGH/);
    const expected = await apiTotal('/v1/tenant/risks?severityLevels=CRITICAL,HIGH&perPage=1');
    expect(expected).toBeGreaterThan(0);
    await expect.poll(shownTotal).toBe(expected);
    const badges = await page.locator('tbody .badge').allTextContents();
    expect(new Set(badges)).toEqual(new Set(['CRITICAL', 'HIGH']));

    // A risk's factors and resolutions open under its row.
    const first = page.locator('tbody button[aria-expanded]').first();
    await first.click();
    expect(await first.getAttribute('aria-expanded')).toBe('true');
    await page.getByRole('heading', { name: 'Factors' }).waitFor();
    await check('risks');

    // The export is every matching risk, not the batch on screen.
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('group', { name: 'Export risks' }).getByRole('button', { name: 'NDJSON' }).click(),
    ]);
    expect(download.suggestedFilename()).toMatch(/^risks-[\d-]+\.ndjson$/);
    const records = readFileSync(await download.path(), 'utf8')
      .trim()
      .split('\n');
    expect(records).toHaveLength(expected);
    expect(new Set(records.map((line) => (JSON.parse(line) as { severityLevel: string }).severityLevel))).toEqual(
      new Set(['CRITICAL', 'HIGH']),
    );

    // Reloaded, the view is the same: the key from sessionStorage, the filter from the address.
    await page.reload();
    await expect.poll(shownTotal).toBe(expected);
    expect(await page.getByRole('group', { name: 'Severity' }).getByLabel('HIGH').isChecked()).toBe(true);
  });

  it('lists assets, moves through the table with the arrow keys, and opens an asset', async () => {
    const { page } = browser;
    await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Assets' }).click();
    await expect.poll(shownTotal).toBe(await apiTotal('/v1/tenant/assets?perPage=1'));
    await check('assets');

    const links = page.locator('tbody tr td:first-child a');
    await links.nth(0).focus();
    await page.keyboard.press('ArrowDown');
    expect(await page.evaluate('document.activeElement.textContent')).toBe(await links.nth(1).textContent());

    const name = (await links.nth(1).textContent())!;
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name }).waitFor();
    await page.getByRole('heading', { name: 'Findings' }).waitFor();
    await page
      .getByRole('table', { name: 'Findings on this asset' })
      .or(page.getByText('Nothing matches'))
      .first()
      .waitFor();
    expect(page.url()).toContain('/console/assets/sirn%3Aassets');
    await check('asset');
  });

  it('pages through vulnerability findings', async () => {
    const { page } = browser;
    await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Vulnerabilities' }).click();
    const total = await apiTotal('/v1/tenant/vulnerabilities?perPage=1');
    await expect.poll(shownTotal).toBe(total);
    expect(total).toBeGreaterThan(100);
    const firstPage = await page.locator('tbody tr').first().textContent();
    await page.getByRole('link', { name: 'Next page →' }).first().click();
    await page.waitForURL(/page=2/);
    await page
      .getByText(/page 2 of/)
      .first()
      .waitFor();
    expect(await page.locator('tbody tr').first().textContent()).not.toBe(firstPage);
    await check('vulnerabilities');
  });

  it('lists every problem of a 400 in words', async () => {
    const { page } = browser;
    await page.goto(`${base}/console/assets?riskScoreGte=42&sortBy=colour`);
    const alert = page.getByRole('alert');
    await expect.poll(() => alert.textContent()).toContain('The server did not accept 2 of the filters');
    expect(await alert.textContent()).toContain('riskScoreGte');
    expect(await alert.textContent()).toContain('sortBy');
    await check('error-400');
  });

  it('signs out: the key is gone from the tab and was never in an address', async () => {
    const { page } = browser;
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Tenant API key').waitFor();
    expect(await page.evaluate('sessionStorage.length')).toBe(0);
    const history = await page.evaluate('performance.getEntriesByType("navigation").map((e) => e.name)');
    expect(JSON.stringify(history)).not.toContain(key);
    expect(page.url()).not.toContain(key);
  });

  it('says the server cannot be reached when it is gone', async () => {
    const { page } = browser;
    await page.goto(`${base}/console/`);
    await page.getByLabel('Tenant API key').fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('[data-ready]').waitFor();
    await exitCodeAfter(server, 'SIGTERM');
    await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Risks' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('The server cannot be reached.');
    await check('server-down');
  });
});
