// What a command loads before it does anything (docs/DESIGN.md §79): each command's code is loaded when it runs, and
// the server's CycloneDX library with the first SBOM. A command that loaded every other's modules made
// `secinv --version` take a second and `secinv serve` half a second longer to listen.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, inject, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'secinv-startup-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// A module loader hook that writes the URL of every module loaded to the file SECINV_TEST_LOADED names.
const hooks = `import { appendFileSync } from 'node:fs';
export async function load(url, context, next) {
  appendFileSync(process.env.SECINV_TEST_LOADED, url + '\\n');
  return next(url, context);
}`;
const javascript = (code: string) => `data:text/javascript,${encodeURIComponent(code)}`;
const hook = javascript(`import { register } from 'node:module'; register(${JSON.stringify(javascript(hooks))});`);

/** The module URLs a Node process loads running `code` (an ES module) under tsx, as the tests run the sources. */
const loadedBy = (name: string, code: string): string[] =>
  loadedRunning(name, ['--import', 'tsx', '--import', hook, '--input-type=module', '-e', code]);

/** The module URLs a Node process loads with these arguments. */
function loadedRunning(name: string, args: string[]): string[] {
  const log = join(dir, `${name}.txt`);
  const result = spawnSync(process.execPath, args, {
    cwd: root,
    env: { ...process.env, SECINV_TEST_LOADED: log },
    encoding: 'utf8',
    timeout: 60_000,
  });
  expect(result.stderr).toBe('');
  expect(result.status).toBe(0);
  return readFileSync(log, 'utf8').split('\n').filter(Boolean);
}

const named = (urls: string[], part: string) => urls.filter((u) => u.includes(part));

describe('what a command loads', () => {
  it('secinv --version loads no command, scanner format, feed or database code', () => {
    const urls = loadedBy(
      'version',
      `const { main } = await import(${JSON.stringify(join(root, 'src/cli/main.ts'))});
       process.exitCode = await main(['--version'], { stdout: { write() { return true; } }, stderr: process.stderr });`,
    );
    // The run itself went through main.ts.
    expect(named(urls, '/src/cli/main.ts').length).toBeGreaterThan(0);
    for (const part of [
      '/src/cli/import.ts',
      '/src/cli/ingest.ts',
      '/src/cli/feeds.ts',
      '/src/cli/risks.ts',
      '/src/cli/keys.ts',
      '/src/cli/tenants.ts',
      '/src/cli/generate.ts',
      '/src/storage/',
      '/node_modules/kysely/',
      '/node_modules/@cyclonedx/',
      '/node_modules/stream-json/',
      '/node_modules/csv-parse/',
    ])
      expect(named(urls, part), part).toEqual([]);
  });

  it('the server starts without the CycloneDX library, and loads it for the first SBOM', () => {
    const urls = loadedBy(
      'serve',
      `const { buildApp } = await import(${JSON.stringify(join(root, 'src/app.ts'))});
       const { openStorage } = await import(${JSON.stringify(join(root, 'src/storage/index.ts'))});
       const storage = await openStorage('sqlite::memory:');
       const app = await buildApp({ storage, logger: false });
       await app.ready();
       const fs = await import('node:fs');
       fs.appendFileSync(process.env.SECINV_TEST_LOADED, 'ready\\n');
       await import(${JSON.stringify(join(root, 'src/domain/sbom.ts'))});
       await app.close();
       await storage.close();`,
    );
    const ready = urls.indexOf('ready');
    expect(ready).toBeGreaterThan(0);
    expect(named(urls.slice(0, ready), '/node_modules/@cyclonedx/')).toEqual([]);
    expect(named(urls.slice(ready), '/node_modules/@cyclonedx/').length).toBeGreaterThan(0);
  });

  it('the bundle keeps that: `secinv --version` loads some of its files, and none of the packages left outside it', () => {
    const bundle = inject('cliBundle');
    const urls = loadedRunning('bundle-version', ['--import', hook, bundle, '--version']);
    const own = named(urls, `${dirname(bundle)}/`);
    expect(own.length).toBeGreaterThan(0);
    // Each command's code, and what only they share, stays in files of its own (docs/DESIGN.md §83).
    expect(own.length).toBeLessThan(readdirSync(dirname(bundle)).length / 2);
    for (const part of ['better-sqlite3', 'pino', '@fastify/', '@cyclonedx/'])
      expect(named(urls, `/node_modules/${part}`), part).toEqual([]);
  });
});
