// What every page of the console's tests must pass, where the page stands: axe-core with no serious or critical
// violation, nothing blocked by the content security policy, no error thrown in the page; then a screenshot of it.
import { mkdirSync } from 'node:fs';
import { expect } from 'vitest';
import { axeViolations, type Browser } from './browser.js';

export const SHOTS = 'test-results/console';

export async function checkPage(browser: Browser, name: string): Promise<void> {
  const { page } = browser;
  const serious = (await axeViolations(page)).filter((v) => v.impact === 'serious' || v.impact === 'critical');
  expect(serious, name).toEqual([]);
  expect(browser.cspViolations, name).toEqual([]);
  expect(browser.pageErrors, name).toEqual([]);
  mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: `${SHOTS}/${name}.png`, fullPage: true });
}
