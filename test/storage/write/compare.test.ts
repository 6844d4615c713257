// Whether writing a record again would leave what is stored as it is (src/storage/write/compare.ts), on both databases:
// a finding written by the writer is unchanged against itself, and changed by a difference in any part of what is
// stored of it (its row, its document, its packages' purls, its aliases); an asset likewise, its derived columns aside.
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { findingRecord, type FindingContext } from '../../../src/ingest/finding-record.js';
import type { ScanFinding } from '../../../src/ingest/scan.js';
import type { RecordsByKind, VulnerabilityRecord } from '../../../src/domain/records.js';
import type { BulkWriter } from '../../../src/storage/index.js';
import type { TestStorage } from '../../helpers.js';
import { A1, fixture } from '../../fixtures.js';
import { importRecords, ORG_A, TENANT_A, TENANT_B, TEST_DIALECTS, withTestDatabase } from '../../helpers.js';

const finding: ScanFinding = {
  vulnerabilityId: 'CVE-2026-0001',
  title: 'a flaw',
  description: null,
  severity: 'HIGH',
  severitySource: 'nvd',
  publishedDate: null,
  primaryUrl: null,
  cwes: [],
  packages: [
    {
      packageName: 'openssl',
      installedVersion: '3.0.1',
      fixedVersion: '3.0.2',
      targetName: 'app',
      targetType: 'alpine',
      targetPath: null,
      targetClass: 'os-pkgs',
      purl: 'pkg:apk/alpine/openssl@3.0.1',
    },
  ],
  vectors: [],
  aliases: ['GHSA-aaaa-bbbb-cccc'],
  location: '$.Results[0].Vulnerabilities[0]',
};

const context: FindingContext = {
  tenantId: TENANT_A,
  organizationId: ORG_A,
  assetId: A1,
  integrationId: null,
  executionId: '1',
  provider: 'AWS',
  assetType: 'AWS::EC2::Instance',
  scanner: 'trivy',
  scannedAt: '2026-11-01T10:00:00.000Z',
};

/** Runs `work` in a write that is rolled back. */
const rolledBack = <T>(opened: TestStorage, work: (writer: BulkWriter) => Promise<T>): Promise<T> =>
  opened.storage.bulkWrite(work, { dryRun: true });

for (const dialect of TEST_DIALECTS)
  describe(`unchanged records, ${dialect}`, () => {
    it('a finding is unchanged against what was written of it, changed by any part of it', () =>
      withTestDatabase(dialect, async (opened) => {
        expect((await importRecords(opened.storage, fixture)).problems).toEqual([]);
        const record = findingRecord(finding, context, undefined);
        await opened.storage.bulkWrite((writer) => writer.write('vulnerability', record), { dryRun: false });
        const unchanged = (records: VulnerabilityRecord[], tenantId = TENANT_A) =>
          rolledBack(opened, (writer) => writer.unchangedFindings(tenantId, A1, records));

        expect(await unchanged([record])).toEqual(new Set([finding.vulnerabilityId]));
        // The same record built again from the same scan is unchanged too.
        expect(await unchanged([findingRecord(finding, context, undefined)])).toEqual(
          new Set([finding.vulnerabilityId]),
        );
        const variants: [string, VulnerabilityRecord][] = [
          ['its scanner (the row only)', { ...record, source: 'grype' }],
          // A file's own intel is kept apart from the document.
          ['its own intel (the row only)', { ...record, vulnerability: { ...record.vulnerability, hasKev: true } }],
          ['its title (the document)', findingRecord({ ...finding, title: 'another title' }, context, undefined)],
          ['when it was first seen', findingRecord(finding, context, '2026-01-01T00:00:00.000Z')],
          ['its integration', findingRecord(finding, { ...context, integrationId: INTEGRATION }, undefined)],
          ['a purl (the packages only)', { ...record, purls: ['pkg:apk/alpine/openssl@3.0.2'] }],
          ['its aliases (their rows only)', { ...record, aliases: ['GHSA-dddd-eeee-ffff'] }],
          ['no aliases', { ...record, aliases: [] }],
          [
            'a package more',
            findingRecord(
              { ...finding, packages: [...finding.packages, { ...finding.packages[0]!, packageName: 'libssl' }] },
              context,
              undefined,
            ),
          ],
        ];
        for (const [what, variant] of variants) expect(await unchanged([variant]), what).toEqual(new Set());
        // Another finding id, and the same finding asked of the other tenant: nothing stored to be unchanged against.
        const other = findingRecord({ ...finding, vulnerabilityId: 'CVE-2026-0002' }, context, undefined);
        expect(await unchanged([other, record])).toEqual(new Set([finding.vulnerabilityId]));
        expect(await unchanged([{ ...record, tenantId: TENANT_B }], TENANT_B)).toEqual(new Set());
      }));

    it('an asset is unchanged against what was written of it, whatever its derived columns say', () =>
      withTestDatabase(dialect, async (opened, db) => {
        expect((await importRecords(opened.storage, fixture)).problems).toEqual([]);
        const stored = await rolledBack(opened, (writer) => writer.storedAsset(TENANT_A, A1));
        if (stored === undefined) throw new Error('the fixture has no asset A1');
        const record: RecordsByKind['asset'] = { tenantId: TENANT_A, ...stored };
        const unchanged = (r: RecordsByKind['asset']) => rolledBack(opened, (writer) => writer.unchangedAsset(r));
        expect(await unchanged(record)).toBe(true);
        // Derived columns follow from the findings and are settled apart.
        await sql`update assets set n_low = n_low + 7 where tenant_id = ${TENANT_A} and id = ${A1}`.execute(db);
        expect(await unchanged(record)).toBe(true);
        expect(await unchanged({ ...record, asset: { ...record.asset, name: 'renamed' } }), 'name').toBe(false);
        expect(await unchanged({ ...record, rawData: { ...record.rawData, more: 1 } }), 'raw data').toBe(false);
        // A change of letter case alone: the metadata filter's lower-cased text stays the same, the raw data does not.
        const [key, value] =
          Object.entries(record.rawData).find(([, v]) => typeof v === 'string' && /[a-z]/.test(v)) ?? [];
        if (key === undefined) throw new Error('the asset has no raw text in lower case');
        const upper = { ...record.rawData, [key]: String(value).toUpperCase() };
        expect(await unchanged({ ...record, rawData: upper }), 'raw data, letter case').toBe(false);
        expect(await unchanged({ ...record, tenantId: TENANT_B }), 'the other tenant').toBe(false);
      }));
  });

const INTEGRATION = '10000000-0000-4000-8000-000000000001';
