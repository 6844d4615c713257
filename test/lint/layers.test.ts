// The lint is the guard of docs/ARCHITECTURE.md: an upward import or an import cycle planted in the source tree must
// fail it. The files are planted in a copy of the tree (its sources and lint settings, the checkout's node_modules
// linked), so that test files running at the same time (the package test builds src/) never see them.
import { cpSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { afterAll, describe, expect, it } from 'vitest';

const checkout = fileURLToPath(new URL('../..', import.meta.url));
const root = mkdtempSync(join(tmpdir(), 'secinv-layers-'));
for (const path of ['src', 'console/src', 'console/tsconfig.json', 'tsconfig.json', 'eslint.config.js', 'package.json'])
  cpSync(join(checkout, path), join(root, path), { recursive: true });
symlinkSync(join(checkout, 'node_modules'), join(root, 'node_modules'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function lintPlanted(files: Record<string, string>): Promise<string[]> {
  // Names are under src/, except the console's (console/src/…).
  const paths = Object.keys(files).map((name) => (name.startsWith('console/') ? name : `src/${name}`));
  try {
    Object.values(files).forEach((text, i) => writeFileSync(join(root, paths[i]!), text));
    const results = await new ESLint({ cwd: root }).lintFiles(paths);
    return results.flatMap((r) => r.messages.map((m) => `${m.ruleId ?? 'parse'}: ${m.message}`));
  } finally {
    for (const path of paths) rmSync(join(root, path), { force: true });
  }
}

describe('layer rules', { timeout: 120_000 }, () => {
  it('an import from a higher layer fails the lint', async () => {
    const messages = await lintPlanted({
      'domain/planted.ts': "import type { Storage } from '../storage/types.js';\nexport type Planted = Storage;\n",
    });
    expect(
      messages.some(
        (m) => m.startsWith('import-x/no-restricted-paths') && m.includes('the domain layer must not import'),
      ),
    ).toBe(true);
  });

  it('an import cycle fails the lint', async () => {
    const messages = await lintPlanted({
      'domain/planted-a.ts': "import { b } from './planted-b.js';\nexport const a = (): number => b() + 1;\n",
      'domain/planted-b.ts': "import { a } from './planted-a.js';\nexport const b = (): number => a() - 1;\n",
    });
    expect(messages.filter((m) => m.startsWith('import-x/no-cycle'))).toHaveLength(2);
  });

  it('the client imports only types from outside its folder', async () => {
    const value = await lintPlanted({
      'client/planted.ts':
        "import { riskFieldNames } from '../domain/risks.js';\nexport const planted = riskFieldNames;\n",
    });
    expect(value.some((m) => m.includes('the client imports only types'))).toBe(true);
    const types = await lintPlanted({
      'client/planted.ts': "import type { Risk } from '../domain/risks.js';\nexport type Planted = Risk;\n",
    });
    expect(types).toEqual([]);
  });

  it('the console imports nothing of the server but the client, and the server nothing of the console', async () => {
    const domain = await lintPlanted({
      'console/src/planted.ts':
        "import { riskFieldNames } from '../../src/domain/risks.js';\nexport const planted = riskFieldNames;\n",
    });
    expect(domain.some((m) => m.includes('the console layer must not import'))).toBe(true);
    const client = await lintPlanted({
      'console/src/planted.ts':
        "import { createClient } from '../../src/client/index.js';\nexport const planted = createClient;\n",
    });
    expect(client).toEqual([]);
    const server = await lintPlanted({
      'http/planted.ts': "import { App } from '../../console/src/app.js';\nexport const planted = App;\n",
    });
    expect(server.some((m) => m.includes('the server never imports the console'))).toBe(true);
  });

  it('an import within the rules passes', async () => {
    const messages = await lintPlanted({
      'storage/planted.ts':
        "import { severityLevelValues } from '../domain/enums.js';\nexport const planted = severityLevelValues.HIGH;\n",
    });
    expect(messages).toEqual([]);
  });
});
