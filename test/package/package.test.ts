// The package as a user gets it: `npm pack`, installed from the tarball into an empty project (which approves
// better-sqlite3's install script through allowScripts), then the installed `secinv` runs, serves a database it filled
// itself, and a script of the project calls it through `secinv/client`. The install takes the dependencies from npm's
// cache alone (`--offline`), which the checkout's own `npm ci` filled: the test uses no network. better-sqlite3's
// install script (prebuild-install) is handed this checkout's compiled binary as a local prebuild, as it would take a
// downloaded one, so that the test does not spend minutes compiling it again; a version other than this checkout's is
// compiled as usual. The pack runs in a copy of the checkout's sources (node_modules linked), so that a build writes
// another dist/ than the one the other test files serve at the same time. The build is the checkout's own when it is
// newer than everything it is built from (as `npm ci`, whose prepare script builds it, leaves a clean clone): the copy
// then packs it without running prepare again, which cost the test two thirds of its CPU. Otherwise `npm pack` builds.
import { execFile, execFileSync, spawn } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'secinv-package-'));
const project = join(dir, 'project');
const secinv = join(project, 'node_modules', '.bin', 'secinv');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** What the build is made from. */
const BUILD_INPUTS = ['package.json', 'src', 'console', 'scripts', 'tsconfig.json', 'tsconfig.build.json'];
/** What `npm pack` reads and builds from. */
const SOURCES = [...BUILD_INPUTS, 'README.md', 'bin', 'docs'];
/** What the build writes, one file of each of its steps (tsc, the bundle, the console). */
const BUILT = ['dist/client/index.js', 'dist/bundle/secinv.js', 'dist/console/index.html'];

/** The latest modification under `path` (a file or a folder). */
function newest(path: string): number {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return readdirSync(path).reduce((latest, name) => Math.max(latest, newest(join(path, name))), stat.mtimeMs);
}

/** Whether the checkout's dist/ was built after the last change to what it is built from. */
function builtSinceSources(): boolean {
  if (!BUILT.every((file) => existsSync(join(root, file)))) return false;
  const built = Math.min(...BUILT.map((file) => statSync(join(root, file)).mtimeMs));
  return BUILD_INPUTS.every((path) => newest(join(root, path)) < built);
}

/** A copy of what `npm pack` reads and builds from, with the checkout's node_modules (and its dist/ when `built`). */
function packableCopy(built: boolean): string {
  const copy = join(dir, 'checkout');
  for (const path of built ? [...SOURCES, 'dist'] : SOURCES)
    if (existsSync(join(root, path))) cpSync(join(root, path), join(copy, path), { recursive: true });
  symlinkSync(join(root, 'node_modules'), join(copy, 'node_modules'));
  return copy;
}

/** A folder holding this checkout's better-sqlite3 binary under the name prebuild-install looks for. */
function localPrebuild(): string {
  const folder = join(dir, 'prebuilds');
  const module = join(root, 'node_modules', 'better-sqlite3');
  const { version } = JSON.parse(readFileSync(join(module, 'package.json'), 'utf8')) as { version: string };
  const libc =
    process.platform === 'linux' &&
    !(process.report.getReport() as { header?: { glibcVersionRuntime?: string } }).header?.glibcVersionRuntime
      ? '-musl'
      : '';
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}${libc}-${process.arch}.tar.gz`;
  mkdirSync(folder, { recursive: true });
  execFileSync('tar', ['czf', join(folder, name), '-C', module, 'build/Release/better_sqlite3.node']);
  return folder;
}

describe("installed from the packed tarball, its dependencies from npm's cache", { timeout: 600_000 }, () => {
  it('packs dist/ (the console too) and bin/, and installs into an empty project', async () => {
    const built = builtSinceSources();
    await run('npm', ['pack', '--pack-destination', dir, ...(built ? ['--ignore-scripts'] : [])], {
      cwd: packableCopy(built),
      maxBuffer: 64 * 1024 * 1024,
    });
    const tarball = readdirSync(dir).find((f) => f.endsWith('.tgz'));
    expect(tarball).toBeDefined();
    const { stdout: listing } = await run('tar', ['tzf', join(dir, tarball!)], { maxBuffer: 16 * 1024 * 1024 });
    for (const file of [
      'package/bin/secinv.js',
      'package/dist/bundle/secinv.js',
      'package/dist/bundle/read-worker.js',
      'package/dist/client/index.js',
    ])
      expect(listing.split('\n')).toContain(file);
    expect(listing).toContain('package/dist/client/index.d.ts');
    // The web console, built by Vite at pack time: its page and its hashed script.
    expect(listing.split('\n')).toContain('package/dist/console/index.html');
    expect(listing).toMatch(/package\/dist\/console\/static\/index-[\w-]+\.js/);
    expect(listing).not.toContain('package/console/');
    expect(listing).not.toContain('package/src/');
    expect(listing).not.toContain('package/test/');

    mkdirSync(project);
    writeFileSync(
      join(project, 'package.json'),
      JSON.stringify({
        name: 'uses-secinv',
        private: true,
        type: 'module',
        allowScripts: { 'better-sqlite3': true },
      }),
    );
    const { stderr } = await run('npm', ['install', '--no-audit', '--no-fund', '--offline', join(dir, tarball!)], {
      cwd: project,
      maxBuffer: 64 * 1024 * 1024,
      env: { ...process.env, npm_config_better_sqlite3_local_prebuilds: localPrebuild() },
    });
    // With the approval, npm has no install script of better-sqlite3 left to warn about.
    expect(stderr).not.toMatch(/better-sqlite3@[\d.]+ \(install/);
  });

  it('runs secinv --version and secinv demo --help', async () => {
    const { version } = (await import(join(root, 'package.json'), { with: { type: 'json' } })).default as {
      version: string;
    };
    expect((await run(secinv, ['--version'])).stdout.trim()).toBe(version);
    expect((await run(secinv, ['demo', '--help'])).stdout).toContain('Usage: secinv demo');
  });

  it('serves a database it filled, the client of the package reads it, and it serves the console', async () => {
    const db = `sqlite:${join(dir, 'inventory.db')}`;
    const generated = join(dir, 'inventory.ndjson');
    const { stdout: inventory } = await run(secinv, ['generate', '--assets', '25', '--risks', '5'], {
      maxBuffer: 64 * 1024 * 1024,
    });
    writeFileSync(generated, inventory);
    await run(secinv, ['import', '--db', db, generated]);
    const tenant = (JSON.parse(inventory.split('\n')[0]!) as { record: { tenantId: string } }).record.tenantId;
    const key = (await run(secinv, ['keys', 'create', '--db', db, '--tenant', tenant])).stdout.trim();

    const server = spawn(secinv, ['serve', '--db', db, '--port', '0'], {
      env: { ...process.env, SECINV_LOG_LEVEL: 'warn' },
    });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let text = '';
        server.stderr.on('data', (c: Buffer) => {
          text += c.toString();
          const found = /serving (http:\/\/\S+)/.exec(text);
          if (found) resolve(found[1]!);
        });
        server.once('exit', (code) => reject(new Error(`serve exited ${code}: ${text}`)));
      });
      writeFileSync(
        join(project, 'count.mjs'),
        "import { createClient } from 'secinv/client';\n" +
          'const client = createClient({ baseUrl: process.argv[2], apiKey: process.argv[3] });\n' +
          'let n = 0;\nfor await (const _ of client.assets.all({ perPage: 10 })) n++;\n' +
          'console.log(JSON.stringify({ n, total: (await client.assets.list()).meta.total }));\n',
      );
      const { stdout } = await run('node', ['count.mjs', url, key], { cwd: project });
      expect(JSON.parse(stdout)).toEqual({ n: 25, total: 25 });

      // The installed server serves the console it was packed with: the page, then the script the page names.
      const page = await fetch(`${url}/console/`);
      expect(page.status).toBe(200);
      const html = await page.text();
      const script = /<script type="module" crossorigin src="(\/console\/static\/[^"]+\.js)"/.exec(html)?.[1];
      expect(script).toBeDefined();
      const code = await fetch(`${url}${script!}`);
      expect(code.status).toBe(200);
      expect(code.headers.get('content-type')).toMatch(/javascript/);
    } finally {
      server.kill('SIGTERM');
    }
  });
});
