import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fileSource, importSources } from '../../src/import/importer.js';
import { bundleArrays } from '../../src/import/reader.js';
import type { Storage } from '../../src/storage/index.js';
import { A1, A2, fixture } from '../fixtures.js';
import { createTenantKey } from '../../src/cli/keys.js';
import {
  importRecords,
  openTestStorage,
  type TestStorage,
  ORG_A,
  ORG_B,
  TENANT_A,
  TENANT_B,
  TEST_DIALECT,
} from '../helpers.js';
import { assetRecord, findingRecord, ndjsonLine, tenantRecord, type ImportRecord } from '../records.js';
import { contentDigest } from '../storage/introspect.js';

let storage: Storage;
let dir: string;
let opened: TestStorage;
beforeEach(async () => {
  opened = await openTestStorage();
  ({ storage, dir } = opened);
});
afterEach(async () => opened.dispose());

const tenantA = tenantRecord();
const assetA = (id: string, extra: Record<string, unknown> = {}): ImportRecord =>
  assetRecord(id, { firstObservedAt: '2024-01-01T00:00:00Z', lastObservedAt: '2024-01-02T00:00:00Z', ...extra });

/** Everything tenant A can see through the storage interface: the asset list and each asset with its rawData. */
async function snapshot(): Promise<string> {
  const scope = { tenantId: TENANT_A, dataVersion: -1 };
  const page = await storage.listAssets(scope, { page: 1, perPage: 1000 });
  const items = await Promise.all(
    page.items.map(async (item) => {
      const id = (JSON.parse(item.toString()) as { id: string }).id;
      return (await storage.getAsset(scope, id, true))?.toString();
    }),
  );
  return JSON.stringify({ total: page.total, list: page.items.map(String), items });
}

// Every case runs twice: read on the writing thread, and read by the reading thread of large imports.
describe.each([false, true])('reading thread: %s', (thread) => {
  describe('import: all or nothing', () => {
    it('a file with one bad record writes nothing and reports its line and field', async () => {
      const records = [...fixture];
      records.splice(10, 0, assetA('sirn:bad', { firstObservedAt: undefined, provider: 'Oracle' }));
      const result = await importRecords(storage, records, false, thread);
      expect(result.written).toBe(false);
      expect(result.problems).toEqual([
        {
          location: 'test.ndjson:11',
          path: 'record.provider',
          message: "must be one of AWS, Azure, GCP, Kubernetes, not 'Oracle'",
        },
        { location: 'test.ndjson:11', path: 'record.firstObservedAt', message: 'is required' },
      ]);
      expect(await storage.listTenants()).toEqual([]);
    });

    it('a bundle reports the array and index of a bad record', async () => {
      const path = join(dir, 'bundle.json');
      writeFileSync(
        path,
        JSON.stringify(
          {
            tenants: [{ tenantId: TENANT_A, organizationId: ORG_A }],
            assets: [assetA(A1)[1], { ...assetA(A2)[1], lastObservedAt: 'yesterday', tags: [{ Key: 1 }] }],
          },
          null,
          2,
        ),
      );
      const result = await importSources(storage, [fileSource(path)], { dryRun: false, readingThread: thread });
      expect(result.problems).toEqual([
        { location: path, path: 'assets[1].lastObservedAt', message: "must be an RFC 3339 date-time, not 'yesterday'" },
        { location: path, path: 'assets[1].tags[0].Key', message: 'must be a string, not a number' },
      ]);
      expect(await storage.listTenants()).toEqual([]);
    });

    it('reports malformed lines, unknown kinds and bad identities with their lines', async () => {
      const text = [
        ndjsonLine(tenantA),
        '{not json',
        ndjsonLine(['widget', {}]),
        ndjsonLine(assetA('has,comma')),
        ndjsonLine(assetA('has space')),
        ndjsonLine(assetA('has%25')),
        ndjsonLine(assetA('x'.repeat(1025))),
        '',
        '[1]',
      ].join('\n');
      const result = await importRecords(storage, text, false, thread);
      expect(result.problems.map((p) => `${p.location} ${p.path}`)).toEqual([
        'test.ndjson:2 ',
        'test.ndjson:3 kind',
        'test.ndjson:4 record.id',
        'test.ndjson:5 record.id',
        'test.ndjson:6 record.id',
        'test.ndjson:7 record.id',
        'test.ndjson:9 ',
      ]);
      expect(await storage.listTenants()).toEqual([]);
    });

    it('tenant and organization ids are UUIDs, as the API names them', async () => {
      const uuid = (value: string) => `must be a UUID (8-4-4-4-12 hexadecimal digits), not '${value}'`;
      const result = await importRecords(
        storage,
        [
          ['tenant', { tenantId: 'acme', organizationId: ORG_A }],
          ['tenant', { tenantId: TENANT_B, organizationId: 'org-1' }],
          ['environment', { tenantId: 'acme', environmentId: '5b0d2c3a-7e4f-4a1b-9c8d-0e1f2a3b4c5d' }],
          // Any letter case, as the API's filters take one.
          ['tenant', { tenantId: TENANT_A.toUpperCase(), organizationId: ORG_A.toUpperCase() }],
        ],
        false,
        thread,
      );
      expect(result.problems.filter((p) => p.message.startsWith('must be a UUID'))).toEqual([
        { location: 'test.ndjson:1', path: 'record.tenantId', message: uuid('acme') },
        { location: 'test.ndjson:2', path: 'record.organizationId', message: uuid('org-1') },
        { location: 'test.ndjson:3', path: 'record.tenantId', message: uuid('acme') },
      ]);
      expect(result.problems.some((p) => p.location === 'test.ndjson:4')).toBe(false);
      expect(await storage.listTenants()).toEqual([]);
    });

    it('every other id the API types as a UUID is one, each refused once at its field', async () => {
      const uuid = (value: string) => `must be a UUID (8-4-4-4-12 hexadecimal digits), not '${value}'`;
      const ok = '5b0d2c3a-7e4f-4a1b-9c8d-0e1f2a3b4c5d';
      const finding = { tenantId: TENANT_A, assetId: A1, vulnerabilityId: 'CVE-1', severityLevel: 'LOW' };
      const seen = { firstObservedAt: '2024-01-01', lastObservedAt: '2024-01-02' };
      const risk = { tenantId: TENANT_A, id: 'r', severityLevel: 'LOW', score: 1, discoveredAt: '2024-01-01' };
      const result = await importRecords(
        storage,
        [
          tenantA,
          ['environment', { tenantId: TENANT_A, environmentId: 'prod' }],
          [
            'integration',
            {
              tenantId: TENANT_A,
              integrationId: 'aws',
              environmentId: 'prod',
              detectionSettingId: 'ds',
              azureSubscriptionId: 'sub',
              azureDirectoryId: 'dir',
            },
          ],
          ['assetGroup', { tenantId: TENANT_A, assetGroupId: 'web', assetIds: [A1] }],
          [
            'exemption',
            { tenantId: TENANT_A, exemptionId: 'ex', exemption: { rules: [{ assetGroupIds: [ok, 'web'] }] } },
          ],
          assetA(A1, { integrationId: 'aws' }),
          ['vulnerability', { ...finding, ...seen, integrationId: 'aws' }],
          ['risk', { ...risk, lifecycleState: 'OPEN', integrationId: 'aws' }],
          // A UUID in any letter case is one.
          assetA(A2, { integrationId: ok.toUpperCase() }),
        ],
        false,
        thread,
      );
      expect(result.problems).toEqual([
        { location: 'test.ndjson:2', path: 'record.environmentId', message: uuid('prod') },
        { location: 'test.ndjson:3', path: 'record.integrationId', message: uuid('aws') },
        { location: 'test.ndjson:3', path: 'record.detectionSettingId', message: uuid('ds') },
        { location: 'test.ndjson:3', path: 'record.azureSubscriptionId', message: uuid('sub') },
        { location: 'test.ndjson:3', path: 'record.azureDirectoryId', message: uuid('dir') },
        { location: 'test.ndjson:3', path: 'record.environmentId', message: uuid('prod') },
        { location: 'test.ndjson:4', path: 'record.assetGroupId', message: uuid('web') },
        { location: 'test.ndjson:5', path: 'record.exemptionId', message: uuid('ex') },
        { location: 'test.ndjson:5', path: 'record.exemption.rules[0].assetGroupIds[1]', message: uuid('web') },
        { location: 'test.ndjson:6', path: 'record.integrationId', message: uuid('aws') },
        { location: 'test.ndjson:7', path: 'record.integrationId', message: uuid('aws') },
        { location: 'test.ndjson:8', path: 'record.integrationId', message: uuid('aws') },
      ]);
      expect(await storage.listTenants()).toEqual([]);
    });

    it('an empty file or bundle, and what ingest or feeds load reads, are one problem each naming the command', async () => {
      const fixture = (path: string) => readFileSync(new URL(`../fixtures/ingest/${path}`, import.meta.url), 'utf8');
      const ingest = (format: string) =>
        `is \`${format}\` output, which \`secinv ingest --tenant ID FILE\` loads (\`secinv import\` reads secinv's own records)`;
      const cases: [string, string][] = [
        ['', 'is empty: it holds no record (docs/IMPORT.md)'],
        ['\n  \n\n', 'is empty: it holds no record (docs/IMPORT.md)'],
        ['{}', 'is an empty bundle: it holds none of the arrays ' + Object.keys(bundleArrays).join(', ')],
        [fixture('trivy/trivy-image-teamdojo-multi-target.json'), ingest('trivy')],
        [fixture('grype/grype-dir-v024.json'), ingest('grype')],
        [fixture('assets/prowler-ocsf-azure.json'), ingest('prowler-ocsf')],
        [fixture('openvex/openvex-vexctl-demo.json'), ingest('openvex')],
        // The catalog's `vulnerabilities` is a bundle array's name too.
        [
          fixture('kev/known_exploited_vulnerabilities.2025.01.24.excerpt.json'),
          'is the CISA KEV catalog, a feed: load it with `secinv feeds load`',
        ],
        [
          fixture('epss/epss_scores-2026-09-29.excerpt-a.csv'),
          'is an EPSS feed file: load it with `secinv feeds load`',
        ],
      ];
      // Through the reading thread (a worker started per import), the empty file and a report are enough to show the
      // same problems arrive from there.
      for (const [text, message] of thread ? [cases[0], cases[3]].filter((c) => c !== undefined) : cases) {
        const result = await importRecords(storage, text, false, thread);
        expect(result.problems, message).toEqual([{ location: 'test.ndjson', path: '', message }]);
      }
      if (thread) return;
      // A bundle with a misspelt array still names it; an explicitly empty one imports nothing, as asked.
      expect((await importRecords(storage, '{"tenants":[],"asets":[]}', false, thread)).problems).toEqual([
        { location: 'test.ndjson', path: 'asets', message: expect.stringContaining('unknown bundle array') as string },
      ]);
      expect((await importRecords(storage, '{"tenants":[]}', false, thread)).problems).toEqual([]);
    });

    it("checks tenants, organizations and a finding's asset across records", async () => {
      const result = await importRecords(
        storage,
        [
          tenantA,
          assetA(A1, { tenantId: TENANT_B }),
          assetA(A2, { organizationId: ORG_B }),
          [
            'vulnerability',
            {
              tenantId: TENANT_A,
              assetId: 'sirn:missing',
              vulnerabilityId: 'CVE-1',
              severityLevel: 'LOW',
              firstObservedAt: '2024-01-01',
              lastObservedAt: '2024-01-01',
            },
          ],
        ],
        false,
        thread,
      );
      expect(result.problems).toEqual([
        {
          location: 'test.ndjson:2',
          path: 'record.tenantId',
          message: `unknown tenant '${TENANT_B}' (import its tenant record first)`,
        },
        {
          location: 'test.ndjson:3',
          path: 'record.organizationId',
          message: `must be the tenant's organizationId '${ORG_A}'`,
        },
        {
          location: 'test.ndjson:4',
          path: 'record.assetId',
          message: `asset 'sirn:missing' is not in tenant '${TENANT_A}'`,
        },
      ]);
    });

    it('accepts a finding whose asset comes later in the same import, or is already stored', async () => {
      const finding = (assetId: string) => findingRecord(assetId, 'CVE-1', 'LOW', { lastObservedAt: '2024-01-01' });
      expect((await importRecords(storage, [tenantA, finding(A1), assetA(A1)], false, thread)).problems).toEqual([]);
      expect((await importRecords(storage, [finding(A1)], false, thread)).problems).toEqual([]);
    });

    it('lists at most 100 problems but counts them all', async () => {
      const records = [tenantA, ...Array.from({ length: 150 }, (_, i) => assetA(`sirn:a${i}`, { provider: null }))];
      const result = await importRecords(storage, records, false, thread);
      expect(result.problems).toHaveLength(100);
      expect(result.problemCount).toBe(150);
    });

    it('a tenant cannot move to another organization', async () => {
      await importRecords(storage, [tenantA], false, thread);
      const result = await importRecords(
        storage,
        [['tenant', { tenantId: TENANT_A, organizationId: ORG_B }]],
        false,
        thread,
      );
      expect(result.problems.map((p) => p.path)).toEqual(['record.organizationId']);
    });

    it('--dry-run validates without writing', async () => {
      const result = await importRecords(storage, fixture, true, thread);
      expect(result.problems).toEqual([]);
      expect(result.written).toBe(false);
      expect(result.counts.asset).toBe(8);
      expect(await storage.listTenants()).toEqual([]);
    });
  });

  describe('import: what it does not understand is an error, never a silent success', () => {
    const bundleProblems = async (text: string) => {
      const path = join(dir, 'bundle.json');
      writeFileSync(path, text);
      const result = await importSources(storage, [fileSource(path)], { dryRun: false, readingThread: thread });
      expect(result.written).toBe(false);
      return result.problems.map((p) => `${p.path}: ${p.message}`);
    };

    it('bundle keys that are not bundle arrays, prototype names included', async () => {
      expect(await bundleProblems('{"__proto__": {"tenants": []}}')).toEqual([
        expect.stringMatching(/^__proto__: unknown bundle array/),
      ]);
      expect(await bundleProblems('{"constructor": [], "toString": [1]}')).toEqual([
        expect.stringMatching(/^constructor: unknown bundle array/),
        expect.stringMatching(/^toString: unknown bundle array/),
      ]);
      expect(await storage.listTenants()).toEqual([]);
    });

    it('keys of an NDJSON line besides kind and record', async () => {
      const line = JSON.stringify({ kind: 'tenant', record: { tenantId: TENANT_A, organizationId: ORG_A }, extra: 1 });
      const result = await importRecords(storage, line, false, thread);
      expect(result.problems).toEqual([
        { location: 'test.ndjson:1', path: 'extra', message: expect.stringMatching(/^unknown key/) },
      ]);
      expect(await storage.listTenants()).toEqual([]);
    });

    it('U+0000 in a string, a raw data value or a raw data key, with its location', async () => {
      const result = await importRecords(
        storage,
        [
          tenantA,
          assetA(A1, { name: 'a\u0000b' }),
          assetA(A2, { rawData: { ok: 'fine', deep: { list: ['x', 'y\u0000'] }, ['k\u0000']: 1 } }),
        ],
        false,
        thread,
      );
      expect(result.problems).toEqual([
        { location: 'test.ndjson:2', path: 'record.name', message: 'must not contain the NUL character (U+0000)' },
        {
          location: 'test.ndjson:3',
          path: 'record.rawData.k\\u0000',
          message: 'key must not contain the NUL character (U+0000)',
        },
        {
          location: 'test.ndjson:3',
          path: 'record.rawData.deep.list[1]',
          message: 'must not contain the NUL character (U+0000)',
        },
      ]);
      expect(await storage.listTenants()).toEqual([]);
    });

    it('raw data nested 100,000 deep is reported where it passes the limit, not a stack overflow', async () => {
      const depth = 100_000;
      const deep = `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
      const line = `{"kind":"asset","record":${JSON.stringify(assetA(A1)[1]).slice(0, -1)},"rawData":${deep}}}`;
      const result = await importRecords(storage, `${ndjsonLine(tenantA)}\n${line}`, false, thread);
      expect(result.problems).toEqual([
        { location: 'test.ndjson:2', path: `record.rawData${'.a'.repeat(64)}`, message: 'nests deeper than 64 levels' },
      ]);
      expect(await storage.listTenants()).toEqual([]);
    });
  });

  describe('import: upserts', () => {
    it('importing the same file twice leaves the same inventory', async () => {
      expect((await importRecords(storage, fixture, false, thread)).problems).toEqual([]);
      const first = await snapshot();
      expect((await importRecords(storage, fixture, false, thread)).problems).toEqual([]);
      expect(await snapshot()).toEqual(first);
    });

    it('an imported record replaces the stored one whole', async () => {
      await importRecords(
        storage,
        [tenantA, assetA(A1, { name: 'first', region: 'us-east-1', tags: [{ Key: 'a', Value: 'b' }] })],
        false,
        thread,
      );
      await importRecords(storage, [assetA(A1, { name: 'second' })], false, thread);
      const got = JSON.parse((await storage.getAsset({ tenantId: TENANT_A, dataVersion: 0 }, A1, false))!.toString());
      expect(got).toMatchObject({ name: 'second', region: null, tags: [] });
    });

    it('reads bundles (one line or pretty) and NDJSON (one line is one record) by content', async () => {
      const bundle = join(dir, 'one-line-bundle.json');
      writeFileSync(
        bundle,
        JSON.stringify({ tenants: [{ tenantId: TENANT_A, organizationId: ORG_A }], assets: [assetA(A1)[1]] }),
      );
      const pretty = join(dir, 'pretty.json');
      writeFileSync(pretty, `\uFEFF${JSON.stringify({ assets: [assetA(A2)[1]] }, null, 2)}`);
      // A byte order mark before the first line (here and in the pretty bundle), as Windows tools write: not JSON.
      const single = join(dir, 'single.ndjson');
      writeFileSync(single, `\uFEFF${ndjsonLine(assetA('sirn:three'))}\n`);
      const result = await importSources(storage, [fileSource(bundle), fileSource(pretty), fileSource(single)], {
        dryRun: false,
        readingThread: thread,
      });
      expect(result.problems).toEqual([]);
      expect(result.counts).toMatchObject({ tenant: 1, asset: 3 });
      const page = await storage.listAssets({ tenantId: TENANT_A, dataVersion: 0 }, { page: 1, perPage: 10 });
      expect(page.total).toBe(3);
    });

    it('reads gzip and UTF-16 files (Windows PowerShell writes `>` as UTF-16) as their UTF-8; bad gzip is a problem', async () => {
      const ndjson = (id: string) => `${ndjsonLine(assetA(id))}\n`;
      const tenant = `${ndjsonLine(tenantA)}\n`;
      const write = (name: string, bytes: Buffer) => {
        writeFileSync(join(dir, name), bytes);
        return fileSource(join(dir, name));
      };
      const utf16be = Buffer.from(`\uFEFF${ndjson('sirn:be')}`, 'utf16le').swap16();
      const sources = [
        write('tenant.ndjson.gz', gzipSync(tenant)),
        write('le.ndjson', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(ndjson('sirn:le-ü'), 'utf16le')])),
        write('be.ndjson', utf16be),
        write('utf16.ndjson.gz', gzipSync(Buffer.from(`\uFEFF${ndjson('sirn:gz')}`, 'utf16le'))),
      ];
      const result = await importSources(storage, sources, { dryRun: false, readingThread: thread });
      expect(result.problems).toEqual([]);
      const page = await storage.listAssets({ tenantId: TENANT_A, dataVersion: 0 }, { page: 1, perPage: 10 });
      expect(page.items.map((a) => (JSON.parse(a.toString()) as { id: string }).id).sort()).toEqual([
        'sirn:be',
        'sirn:gz',
        'sirn:le-ü',
      ]);
      const broken = write('broken.ndjson.gz', gzipSync(ndjson('sirn:x')).subarray(0, 20));
      const refused = await importSources(storage, [broken], { dryRun: false, readingThread: thread });
      expect(refused.problems).toEqual([
        { location: join(dir, 'broken.ndjson.gz'), path: '', message: expect.stringMatching(/^is not valid gzip: /) },
      ]);
    });

    it('a file that goes missing before it is read is reported as a problem, not a crash', async () => {
      // fileSource found the file (its size chooses the reading thread); the thread then fails to open it.
      const path = join(dir, 'gone.ndjson');
      writeFileSync(path, '');
      const source = fileSource(path);
      rmSync(path);
      const result = await importSources(storage, [source], { dryRun: false, readingThread: thread });
      expect(result.problems).toEqual([{ location: path, path: '', message: 'cannot read: no such file (ENOENT)' }]);
    });

    it('a missing file is reported as a problem, not a crash', async () => {
      const result = await importSources(storage, [fileSource(join(dir, 'nope.ndjson'))], {
        dryRun: false,
        readingThread: thread,
      });
      expect(result.problems).toEqual([
        { location: join(dir, 'nope.ndjson'), path: '', message: 'cannot read: no such file (ENOENT)' },
      ]);
    });

    it('a key cannot be created before its tenant exists, and works after import', async () => {
      await expect(createTenantKey(storage, TENANT_A, null)).rejects.toThrow(`unknown tenant '${TENANT_A}'`);
      await importRecords(storage, [tenantA], false, thread);
      expect((await createTenantKey(storage, TENANT_A, null)).key).toMatch(/^secinv_[A-Za-z0-9_-]{43}$/);
    });
  });
});

describe('import: the reading thread', () => {
  /** Every finding of tenant A as served, and every asset. */
  async function findingsAndAssets(): Promise<string> {
    const scope = { tenantId: TENANT_A, dataVersion: -1 };
    const pages = await Promise.all(
      [false, true].map((isExempted) =>
        storage.listVulnerabilities(
          scope,
          { sortBy: 'firstObservedAt', sortOrder: 'ASC', page: 1, perPage: 1000, includeTotal: true, isExempted },
          undefined,
        ),
      ),
    );
    const findings = pages.flatMap((page) => page.items.map(String));
    return JSON.stringify({ findings, total: findings.length, assets: await snapshot() });
  }

  /** Every stored row, by table (what the API does not show too: raw data, search text), but the data versions. */
  async function storedRows(): Promise<Record<string, string>> {
    const { tenants: _, ...rows } = await contentDigest(TEST_DIALECT, opened.url);
    return rows;
  }

  it('writes what reading on the writing thread writes', async () => {
    // A later import of the same records replaces each one whole: it would undo any difference in what was written.
    expect((await importRecords(storage, fixture, false, true)).problems).toEqual([]);
    const threaded = await findingsAndAssets();
    const threadedRows = await storedRows();
    expect(JSON.parse(threaded).total).toBeGreaterThan(0);
    expect((await importRecords(storage, fixture, false, false)).problems).toEqual([]);
    expect(await findingsAndAssets()).toBe(threaded);
    expect(await storedRows()).toEqual(threadedRows);
  });
});
