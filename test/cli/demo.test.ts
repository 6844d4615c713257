// The demo's writes (src/cli/demo.ts): a small generated inventory, then its generated weekly scans ingested at their
// times through the ingest path, leave a tenant whose remediation metrics show openings, resolutions and overdue
// findings. `secinv demo` itself, in a process of its own, is in test/cli/newcomer.test.ts.
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { ingestHistory } from '../../src/cli/demo.js';
import { generateRecords, type GenerateOptions } from '../../src/generate/generator.js';
import { importSources } from '../../src/import/importer.js';
import { openStorage, type Storage } from '../../src/storage/index.js';
import { createKey, openTestStorage, type TestStorage } from '../helpers.js';

const OPTIONS: GenerateOptions = {
  seed: 'demo-history',
  tenants: 1,
  assets: 30,
  findingsPerAsset: 2,
  risks: 0,
  now: new Date('2026-06-30T12:00:00.000Z'),
};
const HISTORY = { images: 4, weeks: 12 };

type Json = Record<string, unknown>;
type Severities = Record<string, Record<string, number>>;

let opened: TestStorage;
let api: Storage;
let app: Awaited<ReturnType<typeof buildApp>>;
let key: string;
let history: { scans: number; resolved: number };

beforeAll(async () => {
  opened = await openTestStorage();
  const lines = [...generateRecords(OPTIONS)].join('\n');
  const imported = await importSources(opened.storage, [{ name: 'demo', open: () => Readable.from([lines]) }], {
    dryRun: false,
  });
  expect(imported.problems).toEqual([]);
  history = await ingestHistory(opened.storage, OPTIONS, HISTORY);
  key = await createKey(opened.storage, (await opened.storage.listTenants())[0]!.tenantId);
  api = await openStorage(opened.url, { role: 'api' });
  app = await buildApp({ storage: api });
}, 120_000);
afterAll(async () => {
  await app?.close();
  await api?.close();
  await opened?.dispose();
});

const json = async (url: string): Promise<Json> => {
  const res = await app.inject({ url, headers: { authorization: `Bearer ${key}` } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<Json>();
};

describe('the demo scan history, ingested', () => {
  it('applies every weekly scan of every image and resolves findings', () => {
    expect(history.scans).toBe(HISTORY.images * HISTORY.weeks);
    expect(history.resolved).toBeGreaterThan(0);
  });

  it('leaves resolutions in the remediation metrics', async () => {
    const body = await json('/v1/tenant/metrics/remediation?from=2026-01-01&to=2026-06-30');
    const resolved = Object.values(body.data as Severities).reduce((sum, s) => sum + s.resolved!, 0);
    expect(resolved).toBe(history.resolved);
  });

  it('gives the weeks openings and resolutions, and leaves overdue findings', async () => {
    const body = await json('/v1/tenant/metrics/findings?from=2026-04-07&to=2026-06-30&interval=week');
    const weeks = body.data as { severities: Severities }[];
    const total = (field: string, week: { severities: Severities }) =>
      Object.values(week.severities).reduce((sum, s) => sum + s[field]!, 0);
    expect(weeks.filter((w) => total('resolved', w) > 0).length).toBeGreaterThan(1);
    expect(weeks.filter((w) => total('opened', w) > 0).length).toBeGreaterThan(1);
    expect(total('overdue', weeks.at(-1)!)).toBeGreaterThan(0);
  });
});
