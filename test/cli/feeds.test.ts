// `secinv feeds load|update|status` on a real database of each dialect; `update` downloads from a loopback HTTP server
// serving the sample feeds (never the public addresses).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import pg from 'pg';
import { FEED_LOCK } from '../../src/storage/tx/turns.js';
import { createTestDatabase, TEST_DIALECT } from '../helpers.js';
import { runCli } from './run.js';

const real = (path: string) => new URL(`../fixtures/ingest/${path}`, import.meta.url).pathname;
const KEV = real('kev/known_exploited_vulnerabilities.2025.01.24.excerpt.json');
const EPSS = real('epss/epss_scores-2026-09-29.excerpt-a.csv');
const EXPLOITDB = real('exploitdb/files_exploits.excerpt-a.csv');

let db: string;
let dir: string;
let drop: () => Promise<void>;
// A migrated copy: no test here is about a database that does not exist yet (newcomer.test.ts is).
beforeEach(async () => {
  ({ url: db, dir, drop } = await createTestDatabase(undefined, { migrated: true }));
});
afterEach(async () => drop());

const status = async (): Promise<{ feed: string; version: string; entries: number; source: string }[]> => {
  const run = await runCli('feeds', 'status', '--json', '--db', db);
  expect(run.code).toBe(0);
  return JSON.parse(run.stdout) as { feed: string; version: string; entries: number; source: string }[];
};

describe('secinv feeds load and status', () => {
  it('loads the three feeds, says what each is, and status lists them', async () => {
    const run = await runCli('feeds', 'load', '--db', db, KEV, EPSS, EXPLOITDB);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('loaded: 3 feeds; 0 findings re-enriched; risks: 0 new, 0 changed, 0 gone\n');
    expect(run.stderr).toContain(`${KEV}: CISA KEV 2025.01.24, 303 entries, 303 changed\n`);
    expect(run.stderr).toContain(`${EPSS}: FIRST EPSS 2026-09-29 (model v2026.06.15), 71 entries, 71 changed\n`);
    expect(run.stderr).toContain(`${EXPLOITDB}: Exploit-DB 2023-07-11, 24 entries, 24 changed\n`);
    expect((await status()).map((s) => [s.feed, s.version, s.entries])).toEqual([
      ['epss', '2026-09-29 (model v2026.06.15)', 71],
      ['exploitdb', '2023-07-11', 24],
      ['kev', '2025.01.24', 303],
    ]);
    const table = await runCli('feeds', 'status', '--db', db);
    expect(table.stdout.split('\n')[0]).toMatch(/^FEED\s+VERSION\s+ENTRIES\s+LOADED AT\s+SOURCE$/);
  });

  it('status before any load says how to load one', async () => {
    const run = await runCli('feeds', 'status', '--db', db);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('no feed loaded yet');
  });

  it('a bad file: exit 1, each problem on its own line naming the file, nothing written', async () => {
    const run = await runCli('feeds', 'load', '--db', db, KEV, real('trivy/trivy-repo-npm.json'), '/nonexistent.csv');
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`${real('trivy/trivy-repo-npm.json')}: is a trivy report, not a feed`);
    expect(run.stderr).toContain('/nonexistent.csv: cannot read: no such file (ENOENT)');
    expect(run.stderr).toContain('feeds rejected: 2 problems; nothing was written');
    expect(await status()).toEqual([]);
  });
});

describe('a file older than the feed loaded', () => {
  // The KEV sample as CISA would have published it on another day, with one entry fewer.
  const kevOf = (catalogVersion: string): string => {
    const catalog = JSON.parse(readFileSync(KEV, 'utf8')) as { vulnerabilities: unknown[] };
    const path = join(dir, `kev-${catalogVersion}.json`);
    writeFileSync(
      path,
      JSON.stringify({ ...catalog, catalogVersion, vulnerabilities: catalog.vulnerabilities.slice(1) }),
    );
    return path;
  };

  it('is refused, naming both versions, unless --allow-older; the same or a newer version loads', async () => {
    expect((await runCli('feeds', 'load', '--db', db, KEV, EPSS)).code).toBe(0);
    const older = kevOf('2025.01.20');
    const epssOlder = join(dir, 'epss_scores-2026-09-01.csv');
    writeFileSync(epssOlder, 'cve,epss,percentile\nCVE-2021-44228,0.9,0.99\n');
    const refused = await runCli('feeds', 'load', '--db', db, older, epssOlder, EXPLOITDB);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      new RegExp(
        `${older}: is CISA KEV 2025\\.01\\.20, older than the 2025\\.01\\.24 loaded at \\S+ from ${KEV}: give --allow-older to load it anyway\n`,
      ),
    );
    expect(refused.stderr).toContain(`${epssOlder}: is FIRST EPSS 2026-09-01, older than the 2026-09-29 (model`);
    expect(refused.stderr).toContain('feeds rejected: 2 problems; nothing was written');
    expect((await status()).map((s) => [s.feed, s.version, s.entries])).toEqual([
      ['epss', '2026-09-29 (model v2026.06.15)', 71],
      ['kev', '2025.01.24', 303],
    ]);
    const allowed = await runCli('feeds', 'load', '--allow-older', '--db', db, older);
    expect(allowed.code).toBe(0);
    expect((await status()).find((s) => s.feed === 'kev')).toMatchObject({ version: '2025.01.20', entries: 302 });
    // Back to a newer one, and the same version again, without the flag.
    expect((await runCli('feeds', 'load', '--db', db, KEV)).code).toBe(0);
    expect((await runCli('feeds', 'load', '--db', db, kevOf('2025.01.24'))).code).toBe(0);
    expect((await status()).find((s) => s.feed === 'kev')).toMatchObject({ version: '2025.01.24', entries: 302 });
  });
});

describe('secinv feeds update', () => {
  let server: Server;
  let base: string;
  const requests: string[] = [];
  beforeAll(async () => {
    const files: Record<string, Buffer> = {
      '/kev.json': readFileSync(KEV),
      '/epss.csv.gz': gzipSync(readFileSync(EPSS)),
      '/files_exploits.csv': readFileSync(EXPLOITDB),
    };
    server = createServer((req, res) => {
      requests.push(req.url ?? '');
      const body = files[req.url ?? ''];
      res.writeHead(body ? 200 : 404).end(body ?? 'not found');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => new Promise<void>((resolve) => server.close(() => resolve())));

  const urls = (epss = '/epss.csv.gz') => [
    '--kev-url',
    `${base}/kev.json`,
    '--epss-url',
    `${base}${epss}`,
    '--exploitdb-url',
    `${base}/files_exploits.csv`,
  ];

  it('downloads the three feeds from the addresses given and loads them', async () => {
    requests.length = 0;
    const run = await runCli('feeds', 'update', '--db', db, ...urls());
    expect(run.stderr).not.toContain('problem');
    expect(run.code).toBe(0);
    expect(requests.sort()).toEqual(['/epss.csv.gz', '/files_exploits.csv', '/kev.json']);
    expect((await status()).map((s) => [s.feed, s.entries, s.source])).toEqual([
      ['epss', 71, `${base}/epss.csv.gz`],
      ['exploitdb', 24, `${base}/files_exploits.csv`],
      ['kev', 303, `${base}/kev.json`],
    ]);
  });

  it('refuses a download older than the feed loaded unless --allow-older', async () => {
    const newer = join(dir, 'kev-newer.json');
    writeFileSync(
      newer,
      JSON.stringify({ ...(JSON.parse(readFileSync(KEV, 'utf8')) as object), catalogVersion: '2025.02.01' }),
    );
    expect((await runCli('feeds', 'load', '--db', db, newer)).code).toBe(0);
    const refused = await runCli('feeds', 'update', '--db', db, ...urls());
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`${base}/kev.json: is CISA KEV 2025.01.24, older than the 2025.02.01 loaded`);
    expect((await status()).map((s) => s.feed)).toEqual(['kev']);
    expect((await runCli('feeds', 'update', '--allow-older', '--db', db, ...urls())).code).toBe(0);
    expect((await status()).map((s) => [s.feed, s.version])).toEqual([
      ['epss', '2026-09-29 (model v2026.06.15)'],
      ['exploitdb', '2023-07-11'],
      ['kev', '2025.01.24'],
    ]);
  });

  it('a failed download: exit 1 naming the address, nothing loaded (not even the feeds that downloaded)', async () => {
    const run = await runCli('feeds', 'update', '--db', db, ...urls('/missing.csv.gz'));
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`${base}/missing.csv.gz: cannot download: HTTP 404\n`);
    expect(await status()).toEqual([]);
  });

  it('a server that is not there: exit 1 naming the address', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const run = await runCli(
      'feeds',
      'update',
      '--db',
      db,
      '--kev-url',
      `http://127.0.0.1:${port}/kev.json`,
      ...urls().slice(2),
    );
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`http://127.0.0.1:${port}/kev.json: cannot download: ECONNREFUSED\n`);
  });
});

describe.runIf(TEST_DIALECT === 'postgres')('a feed load beside the writes that read the feeds (PostgreSQL)', () => {
  /**
   * Holds the feed lock as a running ingest (`shared`) or feed load (`exclusive`) does, runs the command, lets the lock
   * go once the command waits for it (PostgreSQL lists its request as not granted), and returns the command's run.
   */
  const besideHolder = async (mode: 'shared' | 'exclusive', ...argv: string[]) => {
    const holder = new pg.Client({ connectionString: db });
    await holder.connect();
    try {
      await holder.query('begin');
      await holder.query(`select pg_advisory_xact_lock${mode === 'shared' ? '_shared' : ''}($1)`, [FEED_LOCK]);
      const run = runCli(...argv);
      for (let tries = 0; ; tries += 1) {
        const waiting = await holder.query(
          "select 1 from pg_locks where locktype = 'advisory' and objid = $1 and not granted",
          [FEED_LOCK],
        );
        if (waiting.rowCount === 1) break;
        if (tries > 400) throw new Error('the command did not wait for the feed lock');
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      await holder.query('commit');
      return await run;
    } finally {
      await holder.end();
    }
  };

  it('a load waits for a running ingest, and an ingest for a running load, each saying so', async () => {
    const tenant = await runCli('tenants', 'create', '--name', 'A', '--db', db);
    expect(tenant.code).toBe(0);
    const load = await besideHolder('shared', 'feeds', 'load', '--db', db, KEV);
    expect(load.code).toBe(0);
    expect(load.stderr).toContain(
      'secinv: waiting for the writes that are running (imports, ingests, risk derivations, another feed load) to commit\n',
    );
    const report = real('trivy/trivy-image-teamdojo-multi-target.json');
    const args = ['--tenant', tenant.stdout.trim(), '--provider', 'AWS', '--region', 'us-east-1', '--db', db];
    const ingest = await besideHolder('exclusive', 'ingest', ...args, report);
    expect(ingest.code).toBe(0);
    expect(ingest.stderr).toContain('secinv: waiting for the feed load that is running to commit\n');
  });
});
