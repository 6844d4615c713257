// The bundling of the command line (scripts/bundle.ts): a bundled package that finds its files by its own path fails
// the build, named by its file and line; the words in a comment do not.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BUNDLE_ENTRIES, BUNDLE_EXTERNAL, bundleCli, fileRelativeLines } from '../../scripts/bundle.js';

describe('the command line bundle', () => {
  it('names the lines that use __dirname or __filename in code, not in comments', () => {
    const code = [
      '// a comment about __dirname',
      '   * program.executableDir(__dirname);',
      '/* __filename */',
      'const root = path.join(__dirname, "static");',
      'const self = __filename;',
      'const dirnameOf = (p) => p;',
      'const x = my__dirname;',
    ].join('\n');
    expect(fileRelativeLines(code)).toEqual([
      'const root = path.join(__dirname, "static");',
      'const self = __filename;',
    ]);
  });

  it('bundles each worker thread the sources start, from the file beside its caller', () => {
    const started = new Map<string, string>();
    const walk = (folder: string): void => {
      for (const entry of readdirSync(folder, { withFileTypes: true })) {
        const path = join(folder, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (path.endsWith('.ts'))
          for (const m of readFileSync(path, 'utf8').matchAll(
            /(?:startWorker|orderedWorker|messagedWorker)\b[^(]*\(\s*import\.meta\.url,\s*'([\w-]+)'/g,
          ))
            started.set(m[1]!, join(dirname(path), `${m[1]!}.ts`));
      }
    };
    walk('src');
    expect(started.size).toBeGreaterThanOrEqual(3);
    const { secinv, ...workers } = BUNDLE_ENTRIES;
    expect(secinv).toBe('src/cli/bin.ts');
    expect(new Map(Object.entries(workers))).toEqual(started);
    expect(BUNDLE_EXTERNAL).toContain('better-sqlite3');
  });

  it('imports each package it leaves outside from the top of node_modules: each is a direct dependency', () => {
    const { dependencies } = JSON.parse(readFileSync('package.json', 'utf8')) as {
      dependencies: Record<string, string>;
    };
    for (const name of BUNDLE_EXTERNAL.filter((n) => n !== 'pg-native'))
      expect(dependencies, name).toHaveProperty([name]);
  });

  it('fails a build that bundles such a package, whichever file it lands in, and leaves no earlier build behind', async () => {
    const outdir = mkdtempSync(join(tmpdir(), 'secinv-bundle-'));
    try {
      writeFileSync(join(outdir, 'chunk-EARLIER.js'), '');
      // @fastify/swagger reads its package.json by __dirname; bundled, its code lands in a chunk, not in an entry.
      const external = BUNDLE_EXTERNAL.filter((name) => name !== '@fastify/swagger');
      await expect(bundleCli(outdir, process.cwd(), external)).rejects.toThrow(
        /^chunk-\w+\.js finds files by its own path[^\n]*\n.*__dirname/,
      );
      expect(readdirSync(outdir)).not.toContain('chunk-EARLIER.js');
    } finally {
      rmSync(outdir, { recursive: true, force: true });
    }
  }, 60_000);
});
