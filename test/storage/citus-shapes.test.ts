// The statements storage sends on PostgreSQL are of shapes a Citus coordinator routes to one shard when the tables
// are distributed by tenant (docs/SCALING.md): read from a real workload (an import, two ingests of one image, the
// reads of the API's list pages past the first and by flag), since Citus itself cannot run here.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { openStorage, type Storage } from '../../src/storage/index.js';
import { fixture } from '../fixtures.js';
import { createKey, createTestDatabase, importRecords, TENANT_A, TEST_DIALECTS } from '../helpers.js';
import { ingestTexts } from '../ingest/run.js';

/** The text inside the parentheses that open at `start` (just after the `(`). */
function enclosed(text: string, start: number): string {
  let depth = 1;
  for (let i = start; i < text.length; i += 1) {
    if (text[i] === '(') depth += 1;
    if (text[i] === ')') depth -= 1;
    if (depth === 0) return text.slice(start, i);
  }
  return text.slice(start);
}

/** Each lateral subquery of a statement. */
const laterals = (statement: string): string[] =>
  [...statement.matchAll(/\blateral\s*\(/gi)].map((m) => enclosed(statement, m.index + m[0].length));

/** Why Citus would refuse a lateral subquery over a table function (its DeferErrorIfSubqueryRequiresMerge), if it would. */
function refusedLateral(subquery: string): string | undefined {
  if (/\boffset\b/i.test(subquery)) return 'OFFSET';
  if (/\blimit\b/i.test(subquery)) return 'LIMIT';
  if (/\bdistinct\b/i.test(subquery)) return 'DISTINCT';
  if (/\bover\s*\(/i.test(subquery)) return 'a window';
  const group = /\bgroup by\b(.*?)(\border by\b|$)/is.exec(subquery);
  if (group && !/tenant_id/.test(group[1]!)) return 'GROUP BY without tenant_id';
  if (!group && /\b(max|min|count|sum|avg)\s*\(/i.test(subquery)) return 'an aggregate without GROUP BY';
  return undefined;
}

describe.skipIf(!TEST_DIALECTS.includes('postgres'))('statement shapes for Citus (PostgreSQL)', () => {
  const statements: string[] = [];
  const record = (text: string) => void statements.push(text);
  let drop: () => Promise<void>;
  let admin: Storage;
  let api: Storage;

  beforeAll(async () => {
    let url: string;
    ({ url, drop } = await createTestDatabase('postgres'));
    admin = await openStorage(url, { onQuery: record });
    expect((await importRecords(admin, fixture)).problems).toEqual([]);
    const report = readFileSync(
      new URL('../fixtures/ingest/grype/grype-image-busybox-epss.json', import.meta.url),
      'utf8',
    );
    // The second ingest of the image reads back what the first stored.
    for (const at of ['2026-11-01T10:00:00Z', '2026-11-02T10:00:00Z'])
      expect(
        (await ingestTexts(admin, { 'busybox.json': report }, { provider: 'Azure', now: () => new Date(at) })).problems,
      ).toEqual([]);
    const key = await createKey(admin, TENANT_A);
    api = await openStorage(url, { role: 'api', onQuery: record });
    const app = await buildApp({ storage: api, http: { rateLimitPerMinute: 0 } });
    const headers = { authorization: `Bearer ${key}` };
    for (const path of [
      '/v1/tenant/assets?perPage=2&page=2',
      '/v1/tenant/vulnerabilities?perPage=2&page=2',
      '/v1/tenant/vulnerabilities?perPage=2&page=2&sortBy=hasKev&sortOrder=DESC',
      '/v1/tenant/vulnerabilities?perPage=2&sortBy=hasExploit',
      '/v1/tenant/risks',
    ]) {
      const res = await app.inject({ url: path, headers });
      expect(res.statusCode, path).toBe(200);
    }
    await app.close();
  });
  afterAll(async () => {
    await api.close();
    await admin.close();
    await drop();
  });

  it('has no lateral subquery Citus would refuse, and the workload ran each of the lateral probes', () => {
    const withLateral = statements.filter((s) => laterals(s).length > 0);
    const refused = withLateral.flatMap((s) =>
      laterals(s)
        .map(refusedLateral)
        .filter((why) => why !== undefined)
        .map((why) => `${why}: ${s.slice(0, 200)}`),
    );
    expect(refused).toEqual([]);
    // The finding documents by key, the stored findings of a re-scanned asset, the risks of assets.
    for (const table of ['vulnerabilities as v', 'vulnerabilities" as p', '"risks"'])
      expect(
        withLateral.some((s) => s.includes(table)),
        table,
      ).toBe(true);
  });

  it('filters the finding documents of a correlated subquery by the tenant itself', () => {
    const documents = statements.filter((s) => s.includes('from vulnerability_documents as d'));
    expect(documents.length).toBeGreaterThan(0);
    expect(documents.filter((s) => !/d\.tenant_id = \$\d+ and d\.tenant_id = /.test(s))).toEqual([]);
  });

  it('sets the tenant by SET LOCAL, never by set_config()', () => {
    expect(statements.some((s) => s.includes('set local secinv.tenant_id'))).toBe(true);
    expect(statements.filter((s) => /set_config\('secinv/.test(s))).toEqual([]);
  });
});
