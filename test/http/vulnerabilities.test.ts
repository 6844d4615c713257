import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Vulnerability } from '../../src/domain/vulnerabilities.js';
import { createKey, setupWithKeys, TENANT_A, TENANT_B, type TestContext } from '../helpers.js';
import {
  A1,
  A2,
  A4,
  A6,
  GROUP_1,
  GROUP_2,
  INT_DEV,
  INT_PROD,
  INT_UNKNOWN,
  fixture,
  fixtureFinding as finding,
  uuidOf,
} from '../fixtures.js';
import { exemptionRecord, type ImportRecord } from '../records.js';

const ex = (n: number) => uuidOf(0xe00 + n);
const exemption = (exemptionId: string, rules: Record<string, unknown>[]) =>
  exemptionRecord(exemptionId, rules, { name: `name of ${exemptionId}`, createdAt: '2024-01-01T00:00:00Z' });

// Findings of the shared fixture, re-imported with the fields the vulnerability filters need.
const F1 = `${A1}|CVE-2024-0001`;
const F2 = `${A1}|CVE-2024-0002`;
const F3 = `${A1}|CVE-2024-0003`;
const F4 = `${A2}|CVE-2024-0004`;
const F5 = `${A2}|CVE-2024-0005`;
const F6 = `${A4}|CVE-2024-0006`;
const F7 = `${A4}|CVE-2024-0007`;
const F8 = `${A6}|CVE-2024-0008`;

const records: ImportRecord[] = [
  ...fixture,
  finding(A1, 'CVE-2024-0001', 'CRITICAL', {
    provider: 'aws',
    integrationId: INT_PROD,
    executionId: 'exec-1',
    hasKev: true,
    firstObservedAt: '2024-01-01T00:00:00Z',
    lastObservedAt: '2024-07-01T00:00:00Z',
    packages: [
      {
        packageName: 'openssl',
        targetName: 'img:1 > openssl',
        targetType: 'debian',
        targetClass: 'os-pkgs',
        fixedVersion: '3.0.8',
        installedVersion: '3.0.2',
      },
    ],
    knownExploit: { cveID: 'CVE-2024-0001', dueDate: '2024-02-01', dateAdded: '2024-01-10' },
  }),
  finding(A1, 'CVE-2024-0002', 'HIGH', {
    provider: 'AWS',
    integrationId: INT_PROD,
    executionId: 'exec-2',
    hasExploit: true,
    firstObservedAt: '2024-02-01T00:00:00Z',
    lastObservedAt: '2024-06-15T00:00:00Z',
    packages: [
      { packageName: 'log4j-core', targetType: 'jar', targetClass: 'lang-pkgs', fixedVersion: '' },
      { packageName: 'openssl', targetType: 'alpine', targetClass: 'os-pkgs' },
    ],
    exploits: [{ id: 'EDB-1', title: 'PoC', source: 'exploit-db' }],
  }),
  finding(A1, 'CVE-2024-0003', 'LOW', {
    provider: 'AWS',
    integrationId: INT_PROD,
    executionId: 'exec-1',
    isExploitable: true,
    firstObservedAt: '2024-03-01T00:00:00Z',
    packages: [{ packageName: 'zlib', targetClass: 'os-pkgs' }],
  }),
  finding(A2, 'CVE-2024-0004', 'MEDIUM', {
    provider: 'AWS',
    integrationId: INT_DEV,
    packages: [{ packageName: 'lodash', targetType: 'npm', targetClass: 'lang-pkgs', fixedVersion: '4.17.21' }],
  }),
  finding(A4, 'CVE-2024-0006', 'HIGH', { provider: 'Azure', integrationId: INT_UNKNOWN }),
  exemption(ex(0), [{}, { vulnerabilityId: '', assetIds: [], noVendorFix: false, exemptionType: 'ACCEPTED' }]),
  exemption(ex(1), [{ vulnerabilityId: 'CVE-2024-0003' }]),
  exemption(ex(2), [{ assetGroupIds: [GROUP_1], noVendorFix: true }]),
  exemption(ex(3), [{ assetTags: [{ key: 'env', value: 'prod' }], vulnerabilityIds: ['CVE-2024-0003'] }]),
  exemption(ex(4), [{ assetRegions: ['westeurope'], exemptionType: 'accepted' }]),
];

let ctx: TestContext;
let key: string;
beforeAll(async () => {
  ({
    ctx,
    keys: [key],
  } = await setupWithKeys(records, [TENANT_A]));
});
afterAll(async () => ctx.close());

type Finding = Record<string, unknown> & {
  assetId: string;
  vulnerabilityId: string;
  exemptions: { exemptionId: string; exemption: Record<string, unknown> }[];
};
interface Page {
  data: Finding[];
  meta: { page: number; perPage: number; total: number; hasNextPage: boolean; hasPreviousPage: boolean };
  errors?: { code: string; field?: string }[];
}

async function get(query: string, k = key): Promise<{ status: number; body: Page }> {
  const res = await ctx.app.inject({
    url: `/v1/tenant/vulnerabilities${query ? `?${query}` : ''}`,
    headers: { authorization: `Bearer ${k}` },
  });
  return { status: res.statusCode, body: res.json() };
}
const idOf = (f: Finding) => `${f.assetId}|${f.vulnerabilityId}`;
async function ids(query: string): Promise<string[]> {
  const res = await get(query);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body.meta.total).toBe(res.body.data.length);
  return res.body.data.map(idOf);
}

describe('vulnerability list: exemptions', () => {
  it('by default only findings no exemption matches, highest severity first', async () => {
    expect(await ids('')).toEqual([F1, F4, F5, F8]);
    expect(await ids('isExempted=false')).toEqual([F1, F4, F5, F8]);
  });

  it('isExempted=true returns exactly the exempted findings, each with the exemptions that match it', async () => {
    const { body } = await get('isExempted=TRUE');
    expect(body.data.map(idOf)).toEqual([F7, F6, F2, F3]);
    const byId = new Map(body.data.map((f) => [idOf(f), f.exemptions.map((e) => e.exemptionId)]));
    // exemption-0 sets no criterion (an empty rule; an empty string, an empty list and noVendorFix false set none).
    expect(Object.fromEntries(byId)).toEqual({
      [F7]: [ex(4)],
      [F6]: [ex(4)],
      [F2]: [ex(2)],
      [F3]: [ex(1), ex(2), ex(3)],
    });
  });

  it('an exemption is returned whole, with unset criteria null and noVendorFix false', async () => {
    const f3 = (await get(`isExempted=true&assetIds=${A1}&vulnerabilityIds=CVE-2024-0003`)).body.data[0]!;
    expect(f3.exemptions[0]).toEqual({
      exemptionId: ex(1),
      exemption: {
        name: `name of ${ex(1)}`,
        reason: 'RISK_ACCEPTED',
        createdAt: '2024-01-01T00:00:00.000Z',
        updatedAt: null,
        rules: [
          {
            exemptionType: null,
            vulnerabilityId: 'CVE-2024-0003',
            vulnerabilityIds: null,
            assetIds: null,
            assetGroupIds: null,
            assetRegions: null,
            assetTags: null,
            noVendorFix: false,
          },
        ],
        expiresAt: null,
      },
    });
    expect(f3.exemptions[1]?.exemption.rules).toEqual([
      {
        exemptionType: null,
        vulnerabilityId: null,
        vulnerabilityIds: null,
        assetIds: null,
        assetGroupIds: [GROUP_1],
        assetRegions: null,
        assetTags: null,
        noVendorFix: true,
      },
    ]);
    for (const f of (await get('')).body.data) expect(f.exemptions).toEqual([]);
  });

  it('the asset counts agree with the list (exempted findings count nowhere)', async () => {
    const asset = await ctx.app.inject({ url: `/v1/tenant/assets/${A1}`, headers: { authorization: `Bearer ${key}` } });
    expect(asset.json().data).toMatchObject({
      numberOfCriticalVulnerabilities: 1,
      numberOfHighVulnerabilities: 0,
      numberOfLowVulnerabilities: 0,
      hasExploit: false,
      isExploitable: false,
      hasKev: true,
    });
    expect((await get(`assetIds=${A1}&severityLevels=CRITICAL,HIGH,MEDIUM,LOW`)).body.meta.total).toBe(1);
  });
});

describe('vulnerability list: filters', () => {
  const cases: [string, string[]][] = [
    ['vulnerabilityIds=CVE-2024-0001,CVE-2024-0004', [F1, F4]],
    [`assetIds=${A2}`, [F4, F5]],
    [`assetIds=${encodeURIComponent(`${A2},${A4}`)}&isExempted=true`, [F7, F6]],
    ['providers=aws', [F1, F4]],
    ['providers=Azure&isExempted=true', [F6]],
    ['executionIds=exec-1', [F1]],
    ['executionIds=exec-1,exec-2&isExempted=true', [F2, F3]],
    [`integrationIds=${INT_PROD}`, [F1]],
    [`integrationIds=${INT_PROD},${INT_DEV}`, [F1, F4]],
    [`assetGroupIds=${GROUP_1}`, [F1]],
    [`assetGroupIds=${GROUP_2}`, []],
    ['environmentIds=production', [F1]],
    ['environmentIds=non-production', [F4]],
    ['environmentIds=production&isExempted=true', [F2, F3]],
    ['packageName=openssl', [F1]],
    ['packageName=openssl&isExempted=true', [F2]],
    ['packageName=openssl&targetType=debian&targetClass=os-pkgs', [F1]],
    // One package must satisfy every package filter: F2 has openssl (alpine) and a jar, but no openssl jar.
    ['packageName=openssl&targetType=jar&isExempted=true', []],
    [`targetName=${encodeURIComponent('img:1 > openssl')}`, [F1]],
    ['targetClass=lang-pkgs', [F4]],
    ['targetClass=lang-pkgs,os-pkgs&isExempted=true', [F2, F3]],
    ['packageName=OpenSSL', []],
    ['regions=us-east-1', [F1]],
    ['regions=eu-west-1,westeurope', [F4, F5]],
    ['hasKev=true', [F1]],
    ['hasKev=false', [F4, F5, F8]],
    ['isExploitable=true&isExempted=true', [F3]],
    ['hasExploit=true&isExempted=true', [F2]],
    ['hasVendorFix=true', [F1, F4]],
    ['hasVendorFix=false', [F5, F8]],
    ['severityLevels=informational,UNKNOWN', [F5, F8]],
    ['severityLevels=HIGH', []],
    ['severityLevels=HIGH&isExempted=true', [F7, F6, F2]],
    ['firstObservedAtStart=2024-04-01', [F4, F5, F8]],
    ['firstObservedAtEnd=2024-01-01', [F1]],
    ['firstObservedAtStart=2024-02-01&firstObservedAtEnd=2024-03-01&isExempted=true', [F2, F3]],
    [`providers=AWS&hasVendorFix=true&environmentIds=production&regions=us-east-1&packageName=openssl`, [F1]],
  ];
  for (const [query, expected] of cases) it(query, async () => expect(await ids(query)).toEqual(expected));

  it('another tenant sees only its own findings', async () => {
    const keyB = await createKey(ctx.storage, TENANT_B);
    const { body } = await get('', keyB);
    expect(body.data.map(idOf)).toEqual([`${A1}|CVE-2024-9999`]);
    expect(body.data[0]?.tenantId).toBe(TENANT_B);
    expect((await get(`assetIds=${A2}`, keyB)).body.data).toEqual([]);
  });
});

describe('vulnerability list: limits, sorting and pages', () => {
  const list = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => `${prefix}${i}`).join(',');

  it('enforces the list limits on distinct items, and perPage up to 2000', async () => {
    expect((await get(`vulnerabilityIds=${list(100, 'CVE-')}`)).status).toBe(200);
    expect((await get(`vulnerabilityIds=${list(101, 'CVE-')}`)).body.errors).toEqual([
      { code: 'invalid_parameter', field: 'vulnerabilityIds', message: 'vulnerabilityIds must list at most 100 items' },
    ]);
    for (const name of ['assetIds', 'executionIds', 'integrationIds']) {
      expect((await get(`${name}=${list(10, 'x')}`)).status, name).toBe(200);
      expect((await get(`${name}=${list(11, 'x')}`)).body.errors?.[0]?.field, name).toBe(name);
      // Repeats count once, also across repeated parameters.
      expect((await get(`${name}=${list(10, 'x')}&${name}=x0,x1,x2`)).status, name).toBe(200);
    }
    expect((await get('perPage=2000')).status).toBe(200);
    expect((await get('perPage=2001')).status).toBe(400);
    expect((await get('perPage=0')).status).toBe(400);
    expect((await get('page=0')).status).toBe(400);
  });

  // Booleans sort false before true, as 0 before 1.
  const sortKey = (f: Finding, field: string) => (typeof f[field] === 'boolean' ? Number(f[field]) : f[field]);
  for (const sortBy of ['hasKev', 'hasExploit', 'lastObservedAt', 'firstObservedAt', 'severityLevelValue']) {
    for (const sortOrder of ['ASC', 'DESC']) {
      it(`sortBy=${sortBy}&sortOrder=${sortOrder} with the (assetId, vulnerabilityId) tie-break`, async () => {
        const all = [
          ...(await get('perPage=2000')).body.data,
          ...(await get('perPage=2000&isExempted=true')).body.data,
        ];
        const cmp = (a: unknown, b: unknown) => (a === b ? 0 : (a as string) < (b as string) ? -1 : 1);
        const filledRuns = new Set<boolean>();
        for (const isExempted of ['false', 'true']) {
          const subset = all.filter((f) => f.exemptions.length > 0 === (isExempted === 'true'));
          const expected = [...subset]
            .sort((x, y) => {
              const order =
                cmp(sortKey(x, sortBy), sortKey(y, sortBy)) ||
                cmp(x.assetId, y.assetId) ||
                cmp(x.vulnerabilityId, y.vulnerabilityId);
              return sortOrder === 'DESC' ? -order : order;
            })
            .map(idOf);
          expect(
            await ids(`sortBy=${sortBy.toLowerCase()}&sortOrder=${sortOrder.toLowerCase()}&isExempted=${isExempted}`),
          ).toEqual(expected);
          // A flag's sort with a filter on the same flag: only its own run (src/storage/read/vulnerabilities/flag-order.ts).
          if (sortBy !== 'hasKev' && sortBy !== 'hasExploit') continue;
          for (const value of [true, false]) {
            const filtered = all
              .filter((f) => f.exemptions.length > 0 === (isExempted === 'true') && f[sortBy] === value)
              .map(idOf);
            if (filtered.length > 0) filledRuns.add(value);
            expect(
              await ids(`sortBy=${sortBy}&sortOrder=${sortOrder}&isExempted=${isExempted}&${sortBy}=${value}`),
            ).toEqual(expected.filter((id) => filtered.includes(id)));
          }
        }
        // Both runs of a flag had findings in one of the two lists.
        if (sortBy === 'hasKev' || sortBy === 'hasExploit') expect([...filledRuns].sort()).toEqual([false, true]);
      });
    }
  }

  it('sortOrder without sortBy applies to severityLevelValue', async () => {
    expect(await ids('sortOrder=ASC')).toEqual([F8, F5, F4, F1]);
  });

  it('pages: every finding once with perPage=1, past-the-end pages, flags', async () => {
    const seen: string[] = [];
    for (let page = 1; page <= 4; page += 1) {
      const { body } = await get(`perPage=1&page=${page}`);
      expect(body.meta).toEqual({
        page,
        perPage: 1,
        total: 4,
        hasNextPage: page < 4,
        hasPreviousPage: page > 1,
        cursor: page < 4 ? expect.any(String) : null,
      });
      seen.push(...body.data.map(idOf));
    }
    expect(seen).toEqual([F1, F4, F5, F8]);
    expect((await get('page=3&perPage=2')).body).toEqual({
      data: [],
      meta: { page: 3, perPage: 2, total: 4, hasNextPage: false, hasPreviousPage: true, cursor: null },
    });
  });

  it('every field of a finding is present, derived ones computed', async () => {
    const fields = Object.keys(Vulnerability.properties).sort();
    const all = [...(await get('')).body.data, ...(await get('isExempted=true')).body.data];
    for (const f of all) expect(Object.keys(f).sort()).toEqual(fields);
    const f1 = all.find((f) => idOf(f) === F1)!;
    expect(f1).toMatchObject({
      provider: 'AWS',
      severityLevelValue: 5,
      hasVendorFix: true,
      executionId: 'exec-1',
      firstObservedAt: '2024-01-01T00:00:00.000Z',
      knownExploit: { cveID: 'CVE-2024-0001', dueDate: '2024-02-01', dateAdded: '2024-01-10', notes: null },
      exploits: [],
      cwes: [],
      packages: [
        {
          packageName: 'openssl',
          targetName: 'img:1 > openssl',
          targetType: 'debian',
          targetPath: null,
          targetClass: 'os-pkgs',
          fixedVersion: '3.0.8',
          installedVersion: '3.0.2',
        },
      ],
    });
    expect(all.find((f) => idOf(f) === F2)).toMatchObject({ hasVendorFix: false, severityLevelValue: 4 });
    expect(all.find((f) => idOf(f) === F8)).toMatchObject({
      severityLevelValue: 0,
      provider: null,
      packages: [],
      knownExploit: null,
    });
  });
});
