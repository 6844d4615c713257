// Threat-intel feeds on a real database of each dialect: KEV and Exploit-DB enrich the findings of every tenant by id
// and alias, a finding's own values are kept, a newer feed re-enriches (and un-enriches), and a reload changes nothing.
import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadFeedFiles } from '../../src/feeds/load.js';
import { openPath } from '../../src/input/source.js';
import { A1, A2, A4, fixture } from '../fixtures.js';
import { setupWithKeys, TENANT_A, TENANT_B, type TestContext } from '../helpers.js';
import { ingestTexts } from '../ingest/run.js';

type Json = Record<string, unknown>;
const own = (name: string) => new URL(`../fixtures/feeds-own/${name}`, import.meta.url).pathname;
const real = (path: string) => new URL(`../fixtures/ingest/${path}`, import.meta.url).pathname;
const REAL_KEV = real('kev/known_exploited_vulnerabilities.2025.01.24.excerpt.json');
const REAL_EPSS = real('epss/epss_scores-2026-09-29.excerpt-a.csv');
const REAL_EXPLOITDB = real('exploitdb/files_exploits.excerpt-a.csv');

let ctx: TestContext;
let keyA: string;
let keyB: string;
let chainguardAsset: string;
beforeAll(async () => {
  ({
    ctx,
    keys: [keyA, keyB],
  } = await setupWithKeys(fixture, [TENANT_A, TENANT_B]));
  const grype = readFileSync(real('grype/grype-image-chainguard-ruby.json'), 'utf8');
  const result = await ingestTexts(ctx.storage, { 'chainguard.json': grype }, { provider: 'GCP' });
  expect(result.problems).toEqual([]);
  chainguardAsset = result.files[0]?.assetId ?? '';
});
afterAll(async () => ctx.close());

// The tests go back and forth between catalogs of different dates: the refusal of an older one is test/cli/feeds.test.ts's.
/** The steps the last `load` went through. */
let phases: string[] = [];
const load = (...files: string[]) => {
  phases = [];
  return loadFeedFiles(
    ctx.storage,
    files.map((file) => ({ name: file, open: openPath(file) })),
    { allowOlder: true, now: () => new Date('2026-11-10T08:00:00Z'), onPhase: (phase) => phases.push(phase) },
  );
};
const loadTexts = (files: Record<string, string>) =>
  loadFeedFiles(
    ctx.storage,
    Object.entries(files).map(([name, text]) => ({ name, open: () => Readable.from([Buffer.from(text)]) })),
  );

const get = async (url: string, key = keyA) => {
  const res = await ctx.app.inject({ url, headers: { authorization: `Bearer ${key}` } });
  expect(res.statusCode).toBe(200);
  return res.json<Json>();
};
const finding = async (assetId: string, vulnerabilityId: string, key = keyA): Promise<Json> => {
  const body = await get(
    `/v1/tenant/vulnerabilities?assetIds=${encodeURIComponent(assetId)}&vulnerabilityIds=${vulnerabilityId}`,
    key,
  );
  const found = (body.data as Json[])[0];
  expect(found, `${assetId} ${vulnerabilityId}`).toBeDefined();
  return found as Json;
};
const asset = async (id: string, key = keyA) => (await get(`/v1/tenant/assets/${encodeURIComponent(id)}`, key)).data;

describe('feeds load', () => {
  it('loads the real KEV, EPSS and Exploit-DB samples and reports each with its version', async () => {
    const outcome = await load(REAL_KEV, REAL_EPSS, REAL_EXPLOITDB);
    expect(outcome.problems).toEqual([]);
    expect(outcome.load?.feeds.map((f) => [f.feed, f.version, f.entries])).toEqual([
      ['kev', '2025.01.24', 303],
      ['epss', '2026-09-29 (model v2026.06.15)', 71],
      // 35 rows: duplicates (one exploit per tag) and exploits without a CVE leave 24 (CVE, exploit) pairs.
      ['exploitdb', '2023-07-11', 24],
    ]);
    // Each tenant's findings re-enriched, then its risks derived; then the commit and the statistics.
    expect(phases).toEqual([
      'storing',
      'enriching',
      'deriving',
      'enriching',
      'deriving',
      'committing',
      'analyzing',
      'done',
    ]);
    const status = await ctx.storage.feedStatus();
    expect(status.map((s) => [s.feed, s.entries, s.loadedAt, s.source])).toEqual([
      ['epss', 71, '2026-11-10T08:00:00.000Z', REAL_EPSS],
      ['exploitdb', 24, '2026-11-10T08:00:00.000Z', REAL_EXPLOITDB],
      ['kev', 303, '2026-11-10T08:00:00.000Z', REAL_KEV],
    ]);
  });

  it('the same files again change nothing: no row, no finding, no data version', async () => {
    const before = await ctx.storage.tenantSummaries();
    const outcome = await load(REAL_KEV, REAL_EPSS, REAL_EXPLOITDB);
    expect(outcome.load?.feeds.map((f) => f.changed)).toEqual([0, 0, 0]);
    expect(outcome.load?.findingsUpdated).toBe(0);
    expect(await ctx.storage.tenantSummaries()).toEqual(before);
  });

  it('a catalog entry fills hasKev and knownExploit of a finding imported without them, and its asset', async () => {
    expect(await finding(A2, 'CVE-2024-0004')).toMatchObject({ hasKev: false, knownExploit: null });
    const outcome = await load(own('kev-2026.11.01.json'));
    expect(outcome.problems).toEqual([]);
    // Tenant A: CVE-2024-0004 on A2, CVE-2024-0001 on A1 (its own knownExploit was null), CVE-2023-28755 and its
    // GHSA twin on the chainguard image; tenant B: CVE-2024-9999.
    expect(outcome.load?.findingsUpdated).toBe(5);
    expect(await finding(A2, 'CVE-2024-0004')).toMatchObject({
      hasKev: true,
      knownExploit: {
        cveID: 'CVE-2024-0004',
        vendorProject: 'Lodash',
        product: 'lodash',
        vulnerabilityName: 'Lodash Prototype Pollution Vulnerability',
        dateAdded: '2026-10-30',
        dueDate: '2026-11-20',
        requiredAction: 'Apply updates per vendor instructions.',
        shortDescription: 'A test entry for a finding imported without KEV data.',
        notes: 'https://example.org/advisory',
      },
    });
    expect(await asset(A2)).toMatchObject({ hasKev: true });
    // The filter and the sort read the same column.
    const listed = await get('/v1/tenant/vulnerabilities?hasKev=true&perPage=100');
    expect((listed.data as Json[]).map((f) => f.vulnerabilityId).sort()).toEqual([
      'CVE-2023-28755',
      'CVE-2024-0001',
      'CVE-2024-0004',
      'GHSA-hv5j-3h9f-99c2',
    ]);
  });

  it('reaches a finding through its alias (a GHSA id whose CVE is in the catalog)', async () => {
    expect(await finding(chainguardAsset, 'GHSA-hv5j-3h9f-99c2')).toMatchObject({
      hasKev: true,
      knownExploit: { cveID: 'CVE-2023-28755', requiredAction: 'Apply updates per vendor instructions.' },
    });
    expect(await finding(chainguardAsset, 'CVE-2023-28755')).toMatchObject({ hasKev: true });
  });

  it("enriches every tenant's findings, each in its own tenant", async () => {
    const b = await finding(A1, 'CVE-2024-9999', keyB);
    expect(b).toMatchObject({ hasKev: true, tenantId: TENANT_B, knownExploit: { cveID: 'CVE-2024-9999' } });
    expect(await asset(A1, keyB)).toMatchObject({ hasKev: true, tenantId: TENANT_B });
    // Tenant A has no CVE-2024-9999: the catalog adds no finding.
    const listed = await get('/v1/tenant/vulnerabilities?vulnerabilityIds=CVE-2024-9999');
    expect(listed.data).toEqual([]);
  });

  it('a newer catalog re-enriches: a dropped entry clears what only the feed said, an edited one is updated', async () => {
    const outcome = await load(own('kev-2026.11.08.json'));
    expect(outcome.load?.feeds[0]).toMatchObject({ version: '2026.11.08', entries: 3, changed: 2 });
    expect(await finding(A2, 'CVE-2024-0004')).toMatchObject({ hasKev: false, knownExploit: null });
    expect(await asset(A2)).toMatchObject({ hasKev: false });
    expect(await finding(chainguardAsset, 'GHSA-hv5j-3h9f-99c2')).toMatchObject({
      knownExploit: { requiredAction: 'Upgrade the uri gem to 0.12.1 or later.' },
    });
    // The file said hasKev: true for CVE-2024-0001: no catalog can take that away.
    expect(await finding(A1, 'CVE-2024-0001')).toMatchObject({ hasKev: true });
  });

  it("keeps a finding's own values: its hasKev and exploits stay when no feed lists it", async () => {
    expect(await load(real('kev/known_exploited_vulnerabilities.2025.01.24.excerpt.json'))).toMatchObject({
      problems: [],
    });
    expect(await finding(A1, 'CVE-2024-0001')).toMatchObject({ hasKev: true, knownExploit: null });
    expect(await finding(A1, 'CVE-2024-0002')).toMatchObject({ hasExploit: true });
    expect(await asset(A1)).toMatchObject({ hasKev: true, hasExploit: true });
  });

  it('Exploit-DB adds one exploits entry per exploit (each once), and hasExploit to the finding and asset', async () => {
    expect(await finding(A4, 'CVE-2024-0006')).toMatchObject({ hasExploit: false, exploits: [] });
    const outcome = await load(own('exploitdb-own.csv'));
    expect(outcome.load?.feeds[0]).toMatchObject({ feed: 'exploitdb', entries: 3, version: '2026-09-10' });
    expect(await finding(A4, 'CVE-2024-0006')).toMatchObject({
      hasExploit: true,
      exploits: [
        {
          id: '90001',
          // Quotes and backslashes survive the rewrite of the stored document on both databases.
          title: 'Example Server 1.0 - "Remote" Code Execution (C:\\app\\bin)',
          description: 'remote/multiple, published 2026-09-01, verified',
          source: 'Exploit-DB',
          sourceUrl: 'https://www.exploit-db.com/exploits/90001',
        },
        {
          id: '90002',
          title: 'Example Server 1.0 - Local Privilege Escalation',
          description: 'local/linux, published 2026-09-10, not verified',
          source: 'Exploit-DB',
          sourceUrl: 'https://www.exploit-db.com/exploits/90002',
        },
      ],
    });
    expect(await finding(A4, 'CVE-2024-0007')).toMatchObject({ hasExploit: true, exploits: [{ id: '90002' }] });
    expect(await asset(A4)).toMatchObject({ hasExploit: true });
  });

  it('a finding ingested after the feeds were loaded is enriched as it is written', async () => {
    const text = readFileSync(real('trivy/trivy-image-teamdojo-multi-target.json'), 'utf8');
    const result = await ingestTexts(ctx.storage, { 'teamdojo.json': text }, { provider: 'AWS', region: 'us-east-1' });
    expect(result.problems).toEqual([]);
    const id = result.files[0]?.assetId ?? '';
    expect(await finding(id, 'CVE-2020-15999')).toMatchObject({
      hasKev: true,
      knownExploit: { cveID: 'CVE-2020-15999', vendorProject: 'Google' },
    });
    expect(await asset(id)).toMatchObject({ hasKev: true });
  });

  it('a problem in any file writes nothing, not even the good files', async () => {
    const before = await ctx.storage.feedStatus();
    const outcome = await loadTexts({
      'good-epss.csv':
        '#model_version:v1,score_date:2026-11-01T00:00:00Z\ncve,epss,percentile\nCVE-2024-0001,0.5,0.9\n',
      'bad-kev.json': '{"catalogVersion": "x", "vulnerabilities": {"cveID": "CVE-2024-0001"}}',
    });
    expect(outcome.problems).toEqual([
      { file: 'bad-kev.json', message: '$.vulnerabilities: must be an array of entries' },
    ]);
    expect(await ctx.storage.feedStatus()).toEqual(before);
  });

  it('two files of one feed in a run are refused', async () => {
    const outcome = await load(own('kev-2026.11.01.json'), own('kev-2026.11.08.json'));
    expect(outcome.problems).toEqual([
      {
        file: own('kev-2026.11.08.json'),
        message: `is a second CISA KEV file (${own('kev-2026.11.01.json')} is the first): give one file per feed`,
      },
    ]);
  });
});
