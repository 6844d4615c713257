// The lint is the guard of docs/ARCHITECTURE.md: an upward import or an import cycle planted in the source tree must
// fail it. The files are planted in a copy of the tree (its sources and lint settings, the checkout's node_modules
// linked), so that test files running at the same time (the package test builds src/) never see them.
import { cpSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { cycles, importGraph } from '../../scripts/check-cycles.js';
import { afterAll, describe, expect, it } from 'vitest';

const checkout = fileURLToPath(new URL('../..', import.meta.url));
const root = mkdtempSync(join(tmpdir(), 'secinv-layers-'));
for (const path of ['src', 'console/src', 'console/tsconfig.json', 'tsconfig.json', 'eslint.config.js', 'package.json'])
  cpSync(join(checkout, path), join(root, path), { recursive: true });
symlinkSync(join(checkout, 'node_modules'), join(root, 'node_modules'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/**
 * The planted files are linted with the rules of the layers and cycles alone, the lint's own settings otherwise. These
 * rules need no types: without the type-aware ones the lint builds no TypeScript program of the tree for each plant,
 * which was most of this file's CPU.
 */
const LAYER_RULES = new Set([
  'import-x/no-restricted-paths',
  'import-x/no-cycle',
  '@typescript-eslint/no-restricted-imports',
]);

async function lintPlanted(files: Record<string, string>): Promise<string[]> {
  // Names are under src/, except the console's (console/src/…).
  const paths = Object.keys(files).map((name) => (name.startsWith('console/') ? name : `src/${name}`));
  try {
    Object.values(files).forEach((text, i) => writeFileSync(join(root, paths[i]!), text));
    const results = await new ESLint({
      cwd: root,
      overrideConfig: { languageOptions: { parserOptions: { projectService: false } } },
      ruleFilter: ({ ruleId }) => LAYER_RULES.has(ruleId),
    }).lintFiles(paths);
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

  it('import, ingest and feeds import none of each other, and src/input none of them', async () => {
    const across = await lintPlanted({
      'ingest/planted.ts':
        "import type { ImportSource } from '../import/importer.js';\nexport type Planted = ImportSource;\n",
      'import/planted.ts': "import type { FeedSource } from '../feeds/read.js';\nexport type Planted = FeedSource;\n",
      'feeds/planted.ts': "import type { Scan } from '../ingest/scan.js';\nexport type Planted = Scan;\n",
      'input/planted.ts': "import type { Scan } from '../ingest/scan.js';\nexport type Planted = Scan;\n",
    });
    for (const layer of ['ingest', 'import', 'feeds', 'input'])
      expect(across.filter((m) => m.includes(`the ${layer} layer must not import`))).toHaveLength(1);
    const shared = await lintPlanted({
      'ingest/planted.ts': "import type { Json } from '../input/json.js';\nexport type Planted = Json;\n",
      'feeds/planted.ts':
        "import type { OpenedReport } from '../input/source.js';\nexport type Planted = OpenedReport;\n",
      'input/planted.ts': "import type { Provider } from '../domain/enums.js';\nexport type Planted = Provider;\n",
    });
    expect(shared).toEqual([]);
  });

  it('the webhooks sender sits beside ingest and feeds: neither side imports the other, storage not it', async () => {
    const messages = await lintPlanted({
      'webhooks/planted.ts': "import type { Scan } from '../ingest/scan.js';\nexport type Planted = Scan;\n",
      'feeds/planted.ts': "import type { SendResult } from '../webhooks/send.js';\nexport type Planted = SendResult;\n",
      'storage/planted.ts':
        "import type { SendResult } from '../webhooks/send.js';\nexport type Planted = SendResult;\n",
    });
    for (const layer of ['webhooks', 'feeds', 'storage'])
      expect(messages.filter((m) => m.includes(`the ${layer} layer must not import`))).toHaveLength(1);
    const within = await lintPlanted({
      'webhooks/planted.ts':
        "import type { WebhookBatch } from '../storage/index.js';\nexport type Planted = WebhookBatch;\n",
    });
    expect(within).toEqual([]);
  });

  it('the rooms of storage import only the rooms before them, and src/lib nothing of the project', async () => {
    const messages = await lintPlanted({
      'storage/db/planted.ts':
        "import type { WriterRun } from '../write/writer.js';\nexport type Planted = WriterRun;\n",
      'storage/read/planted.ts':
        "import { tenantStore } from '../accounts/tenants.js';\nexport const planted = tenantStore;\n",
      'lib/planted.ts': "import type { Page } from '../storage/types.js';\nexport type Planted = Page;\n",
    });
    for (const room of ['db', 'read'])
      expect(messages.filter((m) => m.includes(`the storage room ${room} must not`))).toHaveLength(1);
    expect(messages.some((m) => m.includes('the lib layer must not import'))).toBe(true);
    const within = await lintPlanted({
      'storage/write/planted.ts': "import { fromTenant } from '../tx/tenant.js';\nexport const planted = fromTenant;\n",
    });
    expect(within).toEqual([]);
  });

  it('a cycle made of type imports fails the walk of scripts/check-cycles.ts, which the lint runs', () => {
    const planted = {
      'src/storage/planted-a.ts': "import type { B } from './planted-b.js';\nexport interface A { b?: B }\n",
      'src/storage/planted-b.ts': "export type { A as B } from './planted-a.js';\n",
    };
    try {
      expect(cycles(importGraph(root))).toEqual([]);
      for (const [path, text] of Object.entries(planted)) writeFileSync(join(root, path), text);
      const found = cycles(importGraph(root)).map((c) => c.map((f) => f.slice(root.length + 1)));
      expect(found).toEqual([['src/storage/planted-a.ts', 'src/storage/planted-b.ts']]);
    } finally {
      for (const path of Object.keys(planted)) rmSync(join(root, path), { force: true });
    }
  });

  it('an import within the rules passes', async () => {
    const messages = await lintPlanted({
      'storage/planted.ts':
        "import { severityLevelValues } from '../domain/enums.js';\nexport const planted = severityLevelValues.HIGH;\n",
    });
    expect(messages).toEqual([]);
  });
});
