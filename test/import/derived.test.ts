// Derived asset fields and exemption matching, end to end: import, then read the asset through the API.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { uuidFor } from '../fixtures.js';
import { createKey, importRecords, setup, TENANT_A, type TestContext } from '../helpers.js';
import { assetRecord, exemptionRecord, findingRecord, tenantRecord, type ImportRecord } from '../records.js';

let ctx: TestContext;
let key: string;
beforeEach(async () => {
  ctx = await setup();
  await importRecords(ctx.storage, [tenantRecord()]);
  key = await createKey(ctx.storage, TENANT_A);
});
afterEach(async () => ctx.close());

const X = 'sirn:assets:x';
const Y = 'sirn:assets:y';
const asset = (id: string, extra: Record<string, unknown> = {}): ImportRecord =>
  assetRecord(id, { type: 'AWS::EC2::Instance', ...extra });
const finding = (
  assetId: string,
  vulnerabilityId: string,
  severityLevel: string,
  extra: Record<string, unknown> = {},
) => findingRecord(assetId, vulnerabilityId, severityLevel, { lastObservedAt: '2024-01-01', ...extra });
const exemption = (name: string, rules: Record<string, unknown>[]): ImportRecord =>
  exemptionRecord(uuidFor(name), rules, { name, reason: 'accepted' });
const G = uuidFor('g');

async function derived(id: string) {
  const res = await ctx.app.inject({ url: `/v1/tenant/assets/${id}`, headers: { authorization: `Bearer ${key}` } });
  const a = res.json().data;
  return {
    counts: [
      a.numberOfCriticalVulnerabilities,
      a.numberOfHighVulnerabilities,
      a.numberOfMediumVulnerabilities,
      a.numberOfLowVulnerabilities,
    ],
    isVulnerable: a.isVulnerable,
    hasKev: a.hasKev,
    hasExploit: a.hasExploit,
    isExploitable: a.isExploitable,
    score: a.vulnerabilityScore,
  };
}

async function load(records: ImportRecord[]) {
  const result = await importRecords(ctx.storage, records);
  expect(result.problems).toEqual([]);
}

const inventory: ImportRecord[] = [
  asset(X, { region: 'us-east-1', tags: [{ Key: 'team', Value: 'web' }] }),
  asset(Y, { region: 'eu-west-1' }),
  finding(X, 'CVE-1', 'CRITICAL', { hasKev: true }),
  finding(X, 'CVE-2', 'HIGH', { hasExploit: true, packages: [{ packageName: 'openssl', fixedVersion: '3.0.1' }] }),
  finding(X, 'CVE-3', 'LOW', { isExploitable: true, packages: [{ packageName: 'zlib', fixedVersion: '' }] }),
  finding(Y, 'CVE-1', 'CRITICAL'),
  // Imported values of derived fields are ignored.
  finding(Y, 'CVE-4', 'INFORMATIONAL', { hasVendorFix: true, severityLevelValue: 9 }),
];

describe('derived asset fields', () => {
  it('are computed from the findings (imported values ignored)', async () => {
    await load([
      ...inventory,
      asset('sirn:assets:z', {
        numberOfCriticalVulnerabilities: 7,
        isVulnerable: true,
        hasKev: true,
        vulnerabilityScore: 9,
      }),
    ]);
    expect(await derived(X)).toEqual({
      counts: [1, 1, 0, 1],
      isVulnerable: true,
      hasKev: true,
      hasExploit: true,
      isExploitable: true,
      score: 8.35,
    });
    expect(await derived(Y)).toEqual({
      counts: [1, 0, 0, 0],
      isVulnerable: true,
      hasKev: false,
      hasExploit: false,
      isExploitable: false,
      score: 7.13,
    });
    expect(await derived('sirn:assets:z')).toEqual({
      counts: [0, 0, 0, 0],
      isVulnerable: false,
      hasKev: false,
      hasExploit: false,
      isExploitable: false,
      score: 0,
    });
  });

  it('exclude findings matched by an exemption, by each kind of criterion', async () => {
    await load([
      ...inventory,
      ['assetGroup', { tenantId: TENANT_A, assetGroupId: G, assetIds: [Y] }],
      exemption('e-kev', [{ vulnerabilityId: 'CVE-1', assetIds: [X] }]),
      exemption('e-novendorfix', [{ noVendorFix: true, assetRegions: ['us-east-1'] }]),
      exemption('e-group', [{ assetGroupIds: [G], vulnerabilityIds: ['CVE-1'] }]),
      exemption('e-nothing', [{}, { vulnerabilityId: '', noVendorFix: false, exemptionType: 'RISK_ACCEPTED' }]),
    ]);
    // X keeps only CVE-2 (it has a vendor fix); CVE-1 is exempted by e-kev, CVE-3 by e-novendorfix.
    expect(await derived(X)).toEqual({
      counts: [0, 1, 0, 0],
      isVulnerable: true,
      hasKev: false,
      hasExploit: true,
      isExploitable: false,
      score: 3.93,
    });
    // Y keeps only its INFORMATIONAL finding: vulnerable, but counted in no severity.
    expect(await derived(Y)).toEqual({
      counts: [0, 0, 0, 0],
      isVulnerable: true,
      hasKev: false,
      hasExploit: false,
      isExploitable: false,
      score: 0,
    });
  });

  it('a finding matched by two exemptions is excluded once', async () => {
    await load([
      ...inventory,
      exemption('e1', [{ vulnerabilityId: 'CVE-2' }]),
      exemption('e2', [{ assetTags: [{ key: 'team', value: 'web' }], vulnerabilityIds: ['CVE-2'] }]),
    ]);
    expect((await derived(X)).counts).toEqual([1, 0, 0, 1]);
  });

  it('follow later imports of exemptions, groups and findings', async () => {
    await load(inventory);
    await load([exemption('e1', [{ assetGroupIds: [G] }])]);
    expect((await derived(Y)).counts).toEqual([1, 0, 0, 0]);
    await load([['assetGroup', { tenantId: TENANT_A, assetGroupId: G, assetIds: [Y] }]]);
    expect(await derived(Y)).toMatchObject({ counts: [0, 0, 0, 0], isVulnerable: false });
    // Replacing the exemption with a rule that no longer matches brings the findings back.
    await load([exemption('e1', [{ assetGroupIds: [uuidFor('other')] }])]);
    expect(await derived(Y)).toMatchObject({ counts: [1, 0, 0, 0], isVulnerable: true });
    await load([finding(Y, 'CVE-5', 'HIGH', { hasKev: true })]);
    expect(await derived(Y)).toMatchObject({ counts: [1, 1, 0, 0], hasKev: true });
    // Re-importing the asset (which resets its stored row) keeps the derived fields.
    await load([asset(Y, { region: 'eu-west-1', name: 'renamed' })]);
    expect(await derived(Y)).toMatchObject({ counts: [1, 1, 0, 0], hasKev: true });
  });

  it('secret counts are the lengths of the secret arrays', async () => {
    await load([
      asset(X, { lowSecrets: [{}, {}], criticalSecrets: [{ a: 1 }], numberOfLowSecrets: 5, numberOfHighSecrets: 3 }),
    ]);
    const res = await ctx.app.inject({ url: `/v1/tenant/assets/${X}`, headers: { authorization: `Bearer ${key}` } });
    expect(res.json().data).toMatchObject({
      numberOfLowSecrets: 2,
      numberOfMediumSecrets: 0,
      numberOfHighSecrets: 0,
      numberOfCriticalSecrets: 1,
    });
  });
});
