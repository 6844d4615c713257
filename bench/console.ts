// The web console's speed: from the click on "Sign in" to the overview drawn with all its figures, in the Chromium of
// the end-to-end tests, on the generated tenant of `npm run bench` (100,000 assets, ~1,000,000 findings, 50,000 risks;
// the same kept SQLite file). Cold: a server just started, whose count cache is empty (each figure of the overview is
// a list's `meta.total`); warm: signing in again on the same server. Also the size of the console's files, gzipped.
// Usage: npm run bench:console [-- --assets N --findings-per-asset N --risks N --runs N --db URL]
import { readdirSync, readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { buildApp } from '../src/app.js';
import { createTenantKey } from '../src/cli/keys.js';
import { CONSOLE_ROOT } from '../src/http/console.js';
import { summaryLine } from '../src/import/importer.js';
import { openStorage } from '../src/storage/index.js';
import { launch } from '../test/console/browser.js';
import { importGenerated } from './import.js';
import { largeTenant } from './large-tenant.js';

const { options, dbUrl, runs } = largeTenant(3);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)] ?? NaN;
const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;

// The console's own files, as a browser downloads them compressed.
const files = readdirSync(`${CONSOLE_ROOT}static`).map((name) => {
  const body = readFileSync(`${CONSOLE_ROOT}static/${name}`);
  return { name, bytes: body.length, gzip: gzipSync(body, { level: 9 }).length };
});
const js = files.filter((f) => f.name.endsWith('.js'));
const jsGzip = js.reduce((sum, f) => sum + f.gzip, 0);
for (const f of files) process.stdout.write(`${f.name}: ${kb(f.bytes)}, ${kb(f.gzip)} gzip\n`);
process.stdout.write(`console JavaScript: ${kb(jsGzip)} gzip (budget 200 KB)\n`);

const storage = await openStorage(dbUrl);
if ((await storage.listTenants()).length === 0) {
  const result = await importGenerated(storage, options);
  if (result.problemCount > 0) throw new Error(`import failed: ${JSON.stringify(result.problems.slice(0, 3))}`);
  process.stdout.write(`${summaryLine(result, false)} in ${result.seconds.toFixed(0)} s\n`);
} else process.stdout.write(`reusing ${dbUrl} (delete it to import again)\n`);
const tenant = (await storage.listTenants())[0]!;
const { key } = await createTenantKey(storage, tenant.tenantId, 'bench-console');
await storage.close();

const browser = await launch();
const { page } = browser;
/** Slowest API requests of the last sign-in, by the browser's own timing. */
let requests: { url: string; ms: number }[] = [];
page.on('requestfinished', (request) => {
  const timing = request.timing();
  if (request.url().includes('/v1/tenant/'))
    requests.push({ url: new URL(request.url()).search, ms: timing.responseEnd });
});

interface Timing {
  /** As the driver saw it: from its click on "Sign in" until its locator found the figures drawn. */
  first: number;
  all: number;
  /** As the page timed itself (the console's User Timing marks): from the form's submit to the render. */
  pageFirst: number;
  pageAll: number;
}

/** One sign-in, from the form to the overview's first figure and to all of them. */
async function signIn(address: string): Promise<Timing> {
  await page.goto(`${address}/console/`);
  await page.getByLabel('Tenant API key').fill(key);
  requests = [];
  const started = performance.now();
  await page.getByRole('button', { name: 'Sign in' }).click();
  // A locator, not waitForFunction: the console's policy forbids the eval that the latter runs in the page.
  await page.locator('.card-figure').filter({ hasNotText: '…' }).first().waitFor({ timeout: 120_000 });
  const first = performance.now() - started;
  await page.locator('[data-ready]').waitFor({ timeout: 120_000 });
  const all = performance.now() - started;
  const marks = await page.evaluate<{ first: number; all: number }>(`(() => {
    const at = (name) => performance.getEntriesByName(name)[0]?.startTime ?? NaN;
    return { first: at('secinv:first-figure') - at('secinv:sign-in'), all: at('secinv:overview') - at('secinv:sign-in') };
  })()`);
  await page.getByRole('button', { name: 'Sign out' }).click();
  return { first, all, pageFirst: marks.first, pageAll: marks.all };
}

const cold: Timing[] = [];
const warm: Timing[] = [];
let slowest: { url: string; ms: number }[] = [];
try {
  for (let run = 0; run < runs; run += 1) {
    // A new server on a new connection: no count cached, as after a restart or an import.
    const apiStorage = await openStorage(dbUrl, { role: 'api' });
    const app = await buildApp({ storage: apiStorage });
    const address = await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      cold.push(await signIn(address));
      if (run === 0) slowest = [...requests].sort((a, b) => b.ms - a.ms).slice(0, 3);
      for (let again = 0; again < 3; again += 1) warm.push(await signIn(address));
    } finally {
      await app.close();
      await apiStorage.close();
    }
    const shown = (m: Timing) => `${m.pageAll.toFixed(0)} (driver ${m.all.toFixed(0)})`;
    process.stdout.write(
      `run ${run + 1}, ms to every figure: cold ${shown(cold.at(-1)!)}, warm ${warm.slice(-3).map(shown).join(', ')}\n`,
    );
  }
} finally {
  await browser.close();
}

const ms = (xs: number[]) => `${median(xs).toFixed(0)} ms`;

process.stdout.write(
  [
    '',
    `| Sign-in to overview (${options.assets.toLocaleString('en-US')} assets), Chromium headless | first figure, median | every figure, median | every figure, each run | as the driver saw every figure, median |`,
    '|---|---|---|---|---|',
    ...(
      [
        ['cold (server just started, counts not cached)', cold],
        ['warm (signed in again)', warm],
      ] as const
    ).map(
      ([label, runs]) =>
        `| ${label} | ${ms(runs.map((m) => m.pageFirst))} | ${ms(runs.map((m) => m.pageAll))} | ${runs.map((m) => m.pageAll.toFixed(0)).join(', ')} | ${ms(runs.map((m) => m.all))} |`,
    ),
    '',
    `Slowest requests of the first cold sign-in: ${slowest.map((r) => `${r.url} ${r.ms.toFixed(0)} ms`).join('; ')}`,
    `Console JavaScript: ${kb(jsGzip)} gzip (${js.map((f) => kb(f.bytes)).join(' + ')} uncompressed)`,
    '',
  ].join('\n'),
);
