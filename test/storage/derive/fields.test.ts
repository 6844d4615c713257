// Derived asset fields over assets with more findings than one read returns (src/storage/derive/fields.ts reads findings a
// page at a time, continuing inside an asset a full page stopped in): the counts are every finding's, once.
import { describe, expect, it } from 'vitest';
import { A1, A2, A3, fixture } from '../../fixtures.js';
import { importRecords, openTestStorage, TENANT_A, TEST_DIALECTS } from '../../helpers.js';

const LEVELS = ['LOW', 'MEDIUM', 'HIGH', 'CRITICAL'] as const;
const fields = [
  'numberOfLowVulnerabilities',
  'numberOfMediumVulnerabilities',
  'numberOfHighVulnerabilities',
  'numberOfCriticalVulnerabilities',
] as const;

for (const dialect of TEST_DIALECTS) {
  describe(`derived fields on ${dialect}`, () => {
    it('count every finding of assets with thousands of findings each, across pages', async () => {
      const opened = await openTestStorage(dialect);
      try {
        expect((await importRecords(opened.storage, fixture)).problems).toEqual([]);
        const counts = async (dataVersion: number) =>
          Promise.all(
            [A1, A2, A3].map(async (id) => {
              const asset = JSON.parse(
                (await opened.storage.getAsset({ tenantId: TENANT_A, dataVersion }, id, false))!.toString('utf8'),
              ) as Record<(typeof fields)[number], number>;
              return fields.map((f) => asset[f]);
            }),
          );
        const before = await counts(1);
        // 3,000 findings on each of three assets: the first read of 5,000 ends inside the second asset.
        const records = [A1, A2, A3].flatMap((assetId) =>
          [...Array(3000).keys()].map((i): [string, Record<string, unknown>] => [
            'vulnerability',
            {
              tenantId: TENANT_A,
              assetId,
              vulnerabilityId: `CVE-2030-${String(10000 + i)}`,
              severityLevel: LEVELS[i % 4],
              firstObservedAt: '2024-05-01T00:00:00Z',
              lastObservedAt: '2024-06-01T00:00:00Z',
            },
          ]),
        );
        expect((await importRecords(opened.storage, records)).problems).toEqual([]);
        const after = await counts(2);
        // 750 of each level on each asset.
        expect(after).toEqual(before.map((row) => row.map((n) => n + 750)));
      } finally {
        await opened.dispose();
      }
    });
  });
}
