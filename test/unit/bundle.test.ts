// The bundling of the command line (scripts/bundle.ts): a bundled package that finds its files by its own path fails
// the build, named by its line; the words in a comment do not.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BUNDLE_ENTRIES, BUNDLE_EXTERNAL, fileRelativeLines } from '../../scripts/bundle.js';

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
            /(?:startWorker|orderedWorker)\b[^(]*\(\s*import\.meta\.url,\s*'([\w-]+)'/g,
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
});
