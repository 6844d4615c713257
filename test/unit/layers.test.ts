// The lint is the guard of docs/ARCHITECTURE.md: an upward import or an import cycle planted in the source tree must
// fail it. The planted files live only for the duration of the test.
import { randomBytes } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

async function lintPlanted(files: Record<string, string>): Promise<string[]> {
  const tag = randomBytes(4).toString('hex');
  // Names are under src/, except the console's (console/src/…).
  const paths = Object.keys(files).map((name) =>
    (name.startsWith('console/') ? name : `src/${name}`).replace('TAG', tag),
  );
  try {
    Object.values(files).forEach((text, i) => writeFileSync(`${root}${paths[i]}`, text.replaceAll('TAG', tag)));
    const results = await new ESLint({ cwd: root }).lintFiles(paths);
    return results.flatMap((r) => r.messages.map((m) => `${m.ruleId ?? 'parse'}: ${m.message}`));
  } finally {
    for (const path of paths) rmSync(`${root}${path}`, { force: true });
  }
}

describe('layer rules', { timeout: 120_000 }, () => {
  it('an import from a higher layer fails the lint', async () => {
    const messages = await lintPlanted({
      'domain/planted-TAG.ts': "import type { Storage } from '../storage/types.js';\nexport type Planted = Storage;\n",
    });
    expect(
      messages.some(
        (m) => m.startsWith('import-x/no-restricted-paths') && m.includes('the domain layer must not import'),
      ),
    ).toBe(true);
  });

  it('an import cycle fails the lint', async () => {
    const messages = await lintPlanted({
      'domain/planted-a-TAG.ts': "import { b } from './planted-b-TAG.js';\nexport const a = (): number => b() + 1;\n",
      'domain/planted-b-TAG.ts': "import { a } from './planted-a-TAG.js';\nexport const b = (): number => a() - 1;\n",
    });
    expect(messages.filter((m) => m.startsWith('import-x/no-cycle'))).toHaveLength(2);
  });

  it('the client imports only types from outside its folder', async () => {
    const value = await lintPlanted({
      'client/planted-TAG.ts':
        "import { riskFieldNames } from '../domain/risks.js';\nexport const planted = riskFieldNames;\n",
    });
    expect(value.some((m) => m.includes('the client imports only types'))).toBe(true);
    const types = await lintPlanted({
      'client/planted-TAG.ts': "import type { Risk } from '../domain/risks.js';\nexport type Planted = Risk;\n",
    });
    expect(types).toEqual([]);
  });

  it('the console imports nothing of the server but the client, and the server nothing of the console', async () => {
    const domain = await lintPlanted({
      'console/src/planted-TAG.ts':
        "import { riskFieldNames } from '../../src/domain/risks.js';\nexport const planted = riskFieldNames;\n",
    });
    expect(domain.some((m) => m.includes('the console layer must not import'))).toBe(true);
    const client = await lintPlanted({
      'console/src/planted-TAG.ts':
        "import { createClient } from '../../src/client/index.js';\nexport const planted = createClient;\n",
    });
    expect(client).toEqual([]);
    const server = await lintPlanted({
      'http/planted-TAG.ts': "import { App } from '../../console/src/app.js';\nexport const planted = App;\n",
    });
    expect(server.some((m) => m.includes('the server never imports the console'))).toBe(true);
  });

  it('an import within the rules passes', async () => {
    const messages = await lintPlanted({
      'storage/planted-TAG.ts':
        "import { severityLevelValues } from '../domain/enums.js';\nexport const planted = severityLevelValues.HIGH;\n",
    });
    expect(messages).toEqual([]);
  });
});
