// A feed load re-enriches findings through its own path (src/storage/feeds/enrich.ts reEnrichTenant), which makes each distinct
// intel once and shares it among the findings it fits; an import or ingest over loaded feeds makes each finding's
// intel as it writes it. The two must agree, finding by finding, on both databases: the same inventory loaded after
// the feeds and before them ends with the same intel and flags, with findings of one CVE that differ by their own
// intel and findings of one id that differ by their aliases among them.
import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadFeedFiles } from '../../src/feeds/load.js';
import { connect } from '../../src/storage/db/connect.js';
import { A1, A2, A4, A5, fixture, fixtureFinding } from '../fixtures.js';
import { importRecords, openTestStorage, TENANT_A, TEST_DIALECTS, type TestStorage } from '../helpers.js';
import { ingestTexts } from '../ingest/run.js';
import { kevCatalog } from './kev-catalog.js';

const GRYPE = new URL('../fixtures/ingest/grype/grype-image-chainguard-ruby.json', import.meta.url);
/** A GHSA id that the Grype report relates to CVE-2023-28755; imported below once more without that alias. */
const GHSA = 'GHSA-hv5j-3h9f-99c2';
const grype = readFileSync(GRYPE, 'utf8');
/** The same report of another image, whose findings (the GHSA's among them) relate to CVE-2024-0002 instead. */
const otherGrype = grype
  .replaceAll('CVE-2023-28755', 'CVE-2024-0002')
  .replaceAll('chainguard/ruby', 'chainguard/other');

const extra = (assetId: string, vulnerabilityId: string, fields: Record<string, unknown> = {}) =>
  fixtureFinding(assetId, vulnerabilityId, 'HIGH', fields);

const records = [
  ...fixture,
  // The fixture has CVE-2024-0001 on A1 with its own hasKev, and CVE-2024-0002 on A1 with its own hasExploit.
  extra(A4, 'CVE-2024-0001'),
  extra(A2, 'CVE-2024-0002', {
    hasExploit: true,
    exploits: [{ id: 'OWN-1', title: 'Own exploit', description: null, source: 'Own', sourceUrl: null }],
  }),
  extra(A5, 'CVE-2024-0002'),
  extra(A5, GHSA),
];

const feeds = {
  'kev.json': kevCatalog('2026.11.20', ['CVE-2024-0001', 'CVE-2023-28755']),
  'files_exploits.csv': [
    'id,file,description,date_published,author,type,platform,port,date_added,date_updated,verified,codes,tags,aliases,screenshot_url,application_url,source_url',
    '70001,exploits/linux/remote/70001.py,"Example - Remote Code Execution",2026-09-01,"A. Tester",remote,linux,,2026-09-02,2026-09-03,1,CVE-2024-0002,,,,,',
    '70002,exploits/linux/remote/70002.py,"Example - Remote Code Execution",2026-09-01,"A. Tester",remote,linux,,2026-09-02,2026-09-03,1,CVE-2023-28755,,,,,',
  ].join('\n'),
};

for (const dialect of TEST_DIALECTS) {
  describe(`findings' intel by a feed load and by their write, ${dialect}`, () => {
    let loadedAfter: TestStorage;
    let loadedBefore: TestStorage;
    beforeAll(async () => {
      [loadedAfter, loadedBefore] = [await openTestStorage(dialect), await openTestStorage(dialect)];
    });
    afterAll(async () => {
      await loadedAfter?.dispose();
      await loadedBefore?.dispose();
    });

    const load = async (t: TestStorage) => {
      const sources = Object.entries(feeds).map(([name, text]) => ({
        name,
        open: () => Readable.from([Buffer.from(text)]),
      }));
      expect((await loadFeedFiles(t.storage, sources)).problems).toEqual([]);
    };
    const fill = async (t: TestStorage) => {
      expect((await importRecords(t.storage, records)).problems).toEqual([]);
      const reports = { 'grype.json': grype, 'other.json': otherGrype };
      const ingested = await ingestTexts(t.storage, reports, { provider: 'GCP' });
      expect(ingested.problems).toEqual([]);
    };
    const intel = async (t: TestStorage) => {
      const { db } = await connect(t.url);
      try {
        return await db
          .selectFrom('vulnerabilities')
          .select(['asset_id', 'vulnerability_id', 'intel', 'has_kev', 'has_exploit'])
          .where('tenant_id', '=', TENANT_A)
          .orderBy('asset_id')
          .orderBy('vulnerability_id')
          .execute();
      } finally {
        await db.destroy();
      }
    };

    it('agree finding by finding', async () => {
      await fill(loadedAfter);
      await load(loadedAfter);
      await load(loadedBefore);
      await fill(loadedBefore);
      const [after, before] = [await intel(loadedAfter), await intel(loadedBefore)];
      expect(after).toEqual(before);
      // The cases are there: one CVE with and without own exploits; one id with an alias in KEV, with another alias
      // only in Exploit-DB, and without any.
      const of = (assetId: string | null, id: string) =>
        after.filter((r) => (assetId === null || r.asset_id === assetId) && r.vulnerability_id === id);
      const exploits = (row: { intel: string | null } | undefined) =>
        (JSON.parse(row?.intel ?? '{}') as { exploits?: { id: string }[] }).exploits?.map((e) => e.id);
      expect(exploits(of(A2, 'CVE-2024-0002')[0])).toEqual(['OWN-1', '70001']);
      expect(exploits(of(A5, 'CVE-2024-0002')[0])).toEqual(['70001']);
      const ghsa = of(null, GHSA).map((r) => [r.has_kev, r.has_exploit, exploits(r) ?? []]);
      expect(ghsa.sort()).toEqual([
        [0, 0, []],
        [0, 1, ['70001']],
        [1, 1, ['70002']],
      ]);
      expect(of(A1, 'CVE-2024-0001')[0]?.has_kev).toBe(1);
      expect(of(A4, 'CVE-2024-0001')[0]?.has_kev).toBe(1);
    });
  });
}
