// SQL that mirrors a domain rule agrees with it: the asset list's text filters (src/storage/read/assets/filters.ts) against
// nameMatches, serviceMatches and metadataMatches (src/domain/search.ts), and the stored derived asset fields against
// deriveAssetFields (src/domain/derived.ts), on both databases, over values chosen to split case folding, pattern
// characters and the metadata separator. The assets' intel flags a feed load refreshes by SQL alone
// (refreshIntelFlags) are checked against the same rule in test/feeds/intel-flags.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ListAssetsQuery } from '../../src/domain/assets.js';
import { deriveAssetFields } from '../../src/domain/derived.js';
import { metadataMatches, metadataSearchText, nameMatches, serviceMatches } from '../../src/domain/search.js';
import type { Storage } from '../../src/storage/index.js';
import { uuidFor } from '../fixtures.js';
import { importRecords, openTestStorage, ORG_A, TENANT_A, TEST_DIALECTS, type TestStorage } from '../helpers.js';

interface Sample {
  name: string | null;
  service: string | null;
  rawData: Record<string, unknown>;
}

const samples: Sample[] = [
  { name: 'Payments-API', service: 'AWS::EC2', rawData: { State: 'Running', Ports: [22, 443] } },
  { name: 'PAYMENTS', service: 'aws::ec2', rawData: { Owner: 'Team-Alpha', nested: { flag: true, none: null } } },
  { name: 'straße', service: 'Azure::Compute', rawData: { 'Mixed Key': 'Mixed Value' } },
  { name: 'İstanbul', service: 'GCP::GKE', rawData: { list: ['İ', 'ß', 1.5] } },
  { name: '100%_done', service: 'Kubernetes::Deployment', rawData: { pattern: '50%_off', under_score: 'a_b' } },
  { name: 'a_b', service: 'EC2', rawData: { key: 'value' } },
  { name: 'ǅemo 🙂', service: 'AWS::Lambda::Extra', rawData: { emoji: '🙂', sep: 'left\u001fright' } },
  { name: null, service: null, rawData: {} },
  { name: '', service: 'AWS::S3', rawData: { '': '' } },
];

const idOf = (i: number) => `sirn:assets:rules:${i}`;

const records = (): [string, Record<string, unknown>][] => [
  ['tenant', { tenantId: TENANT_A, organizationId: ORG_A, name: 'rules' }],
  ...samples.map((s, i): [string, Record<string, unknown>] => [
    'asset',
    {
      tenantId: TENANT_A,
      id: idOf(i),
      provider: 'AWS',
      type: 'AWS::EC2::Instance',
      name: s.name,
      service: s.service,
      firstObservedAt: '2024-01-01',
      lastObservedAt: '2024-01-02',
      rawData: s.rawData,
    },
  ]),
  // Findings of every severity and flag on some assets, and an exemption that removes one of them from the counts.
  ...(['CRITICAL', 'HIGH', 'HIGH', 'MEDIUM', 'LOW', 'INFORMATIONAL', 'UNKNOWN'] as const).map(
    (severityLevel, n): [string, Record<string, unknown>] => [
      'vulnerability',
      {
        tenantId: TENANT_A,
        assetId: idOf(n % 3),
        vulnerabilityId: `CVE-2024-000${n}`,
        severityLevel,
        firstObservedAt: '2024-01-01',
        lastObservedAt: '2024-01-02',
        hasKev: n === 1,
        hasExploit: n === 4,
        isExploitable: n === 5,
      },
    ],
  ),
  [
    'exemption',
    { tenantId: TENANT_A, exemptionId: uuidFor('ex-1'), exemption: { rules: [{ vulnerabilityId: 'CVE-2024-0001' }] } },
  ],
];

const nameNeedles = [
  'payments',
  'PAY',
  'ments-a',
  '%',
  '_',
  '%_',
  'ß',
  'SS',
  'İ',
  'i̇',
  'istanbul',
  'ǆ',
  'ǅ',
  '🙂',
  'straße',
  'x',
];
const serviceItems = [
  ['ec2'],
  ['EC2'],
  ['AWS::EC2'],
  ['aws::ec2'],
  ['compute'],
  ['Deployment'],
  ['ws::ec2'],
  ['lambda::extra'],
  ['extra'],
  ['AWS::Lambda'],
  ['S3', 'gke'],
  [''],
];
const metadataNeedles = [
  'running',
  'PORTS',
  '443',
  '22',
  'true',
  'null',
  'mixed key',
  'ed va',
  'team-alpha',
  '1.5',
  'İ',
  'ß',
  '%_',
  'a_b',
  '🙂',
  'left',
  'left\u001fright',
  't\u001fr',
  'value',
  'key',
];

for (const dialect of TEST_DIALECTS) {
  describe(`SQL mirrors of domain rules on ${dialect}`, () => {
    let opened: TestStorage;
    let storage: Storage;
    beforeAll(async () => {
      opened = await openTestStorage(dialect);
      storage = opened.storage;
      expect((await importRecords(storage, records())).problems).toEqual([]);
    });
    afterAll(async () => opened.dispose());

    const scope = { tenantId: TENANT_A, dataVersion: 1 };
    const listed = async (filters: Partial<ListAssetsQuery>): Promise<string[]> =>
      (await storage.listAssets(scope, { page: 1, perPage: 1000, ...filters })).items
        .map((b) => (JSON.parse(b.toString()) as { id: string }).id)
        .sort();
    const expected = (holds: (s: Sample) => boolean): string[] =>
      samples.flatMap((s, i) => (holds(s) ? [idOf(i)] : [])).sort();

    it('query (name) agrees with nameMatches', async () => {
      for (const needle of nameNeedles)
        expect(await listed({ query: needle }), needle).toEqual(expected((s) => nameMatches(s.name, needle)));
    });

    it('services agrees with serviceMatches', async () => {
      for (const items of serviceItems.filter((i) => !i.includes(''))) {
        expect(await listed({ services: items }), items.join(',')).toEqual(
          expected((s) => serviceMatches(s.service, items)),
        );
      }
    });

    it('metadata agrees with metadataMatches', async () => {
      for (const needle of metadataNeedles) {
        expect(await listed({ metadata: needle }), JSON.stringify(needle)).toEqual(
          expected((s) => metadataMatches(metadataSearchText(s.rawData), needle)),
        );
      }
    });

    it('the stored derived fields are deriveAssetFields of the counted findings', async () => {
      for (let i = 0; i < samples.length; i += 1) {
        const asset = JSON.parse((await storage.getAsset(scope, idOf(i), false))!.toString()) as Record<
          string,
          unknown
        >;
        const findings = (
          await storage.listVulnerabilities(
            scope,
            {
              assetIds: [idOf(i)],
              isExempted: false,
              sortBy: 'severityLevelValue',
              sortOrder: 'DESC',
              page: 1,
              perPage: 100,
              includeTotal: false,
            },
            undefined,
          )
        ).items.map(
          (b) =>
            JSON.parse(b.toString()) as {
              severityLevelValue: number;
              hasKev: boolean;
              hasExploit: boolean;
              isExploitable: boolean;
            },
        );
        const derived = deriveAssetFields(findings);
        expect(Object.fromEntries(Object.keys(derived).map((k) => [k, asset[k]])), idOf(i)).toEqual(derived);
      }
      // The exemption took one HIGH finding of asset 1 out of its counts.
      expect(JSON.parse((await storage.getAsset(scope, idOf(1), false))!.toString())).toMatchObject({
        numberOfHighVulnerabilities: 0,
        hasKev: false,
      });
    });
  });
}
