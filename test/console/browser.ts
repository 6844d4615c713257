// Debian's Chromium driven by playwright-core, for the console's end-to-end tests and its benchmark: headless, in a
// fresh profile, with everything that would call out to the network turned off (this machine has none beyond
// loopback), and an axe-core audit of the page as it stands.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM = process.env.SECINV_CHROMIUM ?? '/usr/bin/chromium';

export interface Browser {
  context: BrowserContext;
  page: Page;
  /** Messages the page logged about its content security policy (each one a blocked load or script). */
  cspViolations: string[];
  /** Errors thrown in the page and not caught. */
  pageErrors: string[];
  close(): Promise<void>;
}

export async function launch(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(`no Chromium at ${CHROMIUM}: apt-get install chromium (or set SECINV_CHROMIUM to another build)`);
  const profile = mkdtempSync(join(tmpdir(), 'secinv-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 900 },
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const cspViolations: string[] = [];
  const pageErrors: string[] = [];
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text());
  });
  page.on('pageerror', (error) => pageErrors.push(error.message));
  return {
    context,
    page,
    cspViolations,
    pageErrors,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  targets: string[];
}

/**
 * The axe-core rules the page breaks (WCAG 2.1 A and AA and best practices). axe is evaluated through the DevTools
 * protocol, which the page's content security policy does not govern: the policy stays as strict as users get it.
 */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  if (!(await page.evaluate('typeof axe !== "undefined"'))) await page.evaluate(axeSource);
  return page.evaluate(`axe
    .run(document, { resultTypes: ['violations'] })
    .then((r) => r.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      targets: v.nodes.slice(0, 3).map((n) => String(n.target)),
    })))`);
}
