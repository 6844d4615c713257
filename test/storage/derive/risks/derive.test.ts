// Risk derivation in the database, on both dialects: which risks the rules derive from stored assets, findings,
// secrets, checks and feeds; what re-deriving keeps (ids, discoveredAt, lifecycle states, bytes); what leaves; the
// riskScore of scanned assets; and that one tenant's derivation never touches another's rows (docs/RISKS.md).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { derivedRiskId } from '../../../../src/domain/risk-engine.js';
import { deriveTenantRisks } from '../../../../src/storage/derive/risks/derive.js';
import { inlineComputer, threadComputer } from '../../../../src/storage/derive/risks/thread.js';
import {
  importRecords,
  openTestStorage,
  ORG_A,
  ORG_B,
  rawTenantAccess,
  TENANT_A,
  TENANT_B,
  TEST_DIALECTS,
  type TestStorage,
} from '../../../helpers.js';
import { uuidFor } from '../../../fixtures.js';

type Rec = [string, Record<string, unknown>];
const ENV = 'e0000000-0000-4000-8000-000000000001';
const INT = '10000000-0000-4000-8000-000000000001';
const EXPOSED = 'sirn:assets:t:aws:ec2:instance:us-east-1:i-exposed';
const ADMIN = 'sirn:assets:t:aws:iam:role:global:admin';
const SECRETS = 'sirn:assets:t:aws:ecr:image:us-east-1:app';
const QUIET = 'sirn:assets:t:aws:s3:bucket:us-east-1:quiet';
const KEV_RISK = 'secinv.exposed-kev-vulnerability';

const asset = (tenantId: string, id: string, over: Record<string, unknown> = {}): Rec => [
  'asset',
  {
    tenantId,
    id,
    provider: 'AWS',
    type: 'AWS::EC2::Instance',
    name: id.split(':').pop(),
    region: 'us-east-1',
    firstObservedAt: '2024-01-01',
    lastObservedAt: '2024-01-02',
    riskScore: 1.5,
    ...over,
  },
];
const finding = (
  tenantId: string,
  assetId: string,
  vulnerabilityId: string,
  over: Record<string, unknown> = {},
): Rec => [
  'vulnerability',
  {
    tenantId,
    assetId,
    vulnerabilityId,
    severityLevel: 'CRITICAL',
    firstObservedAt: '2024-01-01',
    lastObservedAt: '2024-01-02',
    isExploitable: true,
    packages: [{ packageName: 'log4j-core', installedVersion: '2.14.1', fixedVersion: '2.15.0' }],
    ...over,
  },
];

const inventory = (exposed = true): Rec[] => [
  ['tenant', { tenantId: TENANT_A, organizationId: ORG_A, name: 'a' }],
  ['tenant', { tenantId: TENANT_B, organizationId: ORG_B, name: 'b' }],
  ['environment', { tenantId: TENANT_A, environmentId: ENV, name: 'prod', isProduction: true }],
  ['integration', { tenantId: TENANT_A, integrationId: INT, name: 'aws', environmentId: ENV }],
  asset(TENANT_A, EXPOSED, { isPubliclyExposed: exposed, integrationId: INT }),
  finding(TENANT_A, EXPOSED, 'CVE-2021-44228', { hasKev: true }),
  finding(TENANT_A, EXPOSED, 'CVE-2024-0002', { severityLevel: 'LOW', isExploitable: false }),
  asset(TENANT_A, ADMIN, { type: 'AWS::IAM::Role', hasAdminPrivileges: true }),
  finding(TENANT_A, ADMIN, 'CVE-2024-0003', { severityLevel: 'HIGH' }),
  // A scanned asset (a report made it): its riskScore follows its risks.
  asset(TENANT_A, SECRETS, {
    type: 'AWS::ECR::Image',
    criticalSecrets: [{ title: 'AWS Secret Access Key', target: '/app/.env' }],
    rawData: { secinvScans: { trivy: { reportDigest: 'x', scannedAt: '2024-01-02T00:00:00.000Z' } } },
  }),
  asset(TENANT_A, QUIET),
  [
    'risk',
    {
      tenantId: TENANT_A,
      id: 'imported-risk',
      severityLevel: 'HIGH',
      score: 8,
      discoveredAt: '2024-01-01',
      lifecycleState: 'OPEN',
      primaryAssetId: EXPOSED,
    },
  ],
  asset(TENANT_B, EXPOSED, { isPubliclyExposed: true }),
  finding(TENANT_B, EXPOSED, 'CVE-2021-44228', { hasKev: true }),
];

describe.each(TEST_DIALECTS)('risk derivation on %s', (dialect) => {
  let t: TestStorage;
  let raw: Awaited<ReturnType<typeof rawTenantAccess>>;
  beforeEach(async () => {
    t = await openTestStorage(dialect);
    raw = await rawTenantAccess(t.url);
    expect((await importRecords(t.storage, inventory())).problems).toEqual([]);
  });
  afterEach(async () => {
    await raw.close();
    await t.dispose();
  });

  const risks = async (tenantId = TENANT_A) =>
    (
      await raw.db
        .selectFrom('risks')
        .select(['id', 'risk_type_id', 'primary_asset_id', 'lifecycle_state', 'derived', 'discovered_at', 'doc'])
        .where('tenant_id', '=', tenantId)
        .orderBy('id')
        .execute()
    ).map((r) => ({ ...r, doc: Buffer.from(r.doc).toString('utf8') }));
  const riskScoreOf = async (id: string) => {
    const row = await raw.db
      .selectFrom('assets')
      .innerJoin('asset_documents', (j) =>
        j
          .onRef('asset_documents.tenant_id', '=', 'assets.tenant_id')
          .onRef('asset_documents.asset_id', '=', 'assets.id'),
      )
      .select(['risk_score', 'doc'])
      .where('assets.tenant_id', '=', TENANT_A)
      .where('assets.id', '=', id)
      .executeTakeFirstOrThrow();
    return [row.risk_score, (JSON.parse(Buffer.from(row.doc).toString('utf8')) as { riskScore: number }).riskScore];
  };

  it('derives the rules’ risks for one tenant, beside its imported risks, with their factors', async () => {
    const result = await t.storage.deriveRisks(TENANT_A, '2024-05-01T00:00:00.000Z');
    expect(result).toMatchObject({ assets: 4, risks: 4, added: 4, updated: 0, removed: 0 });
    const rows = await risks();
    expect(
      rows
        .filter((r) => r.derived === 1)
        .map((r) => [r.primary_asset_id, r.risk_type_id])
        .sort(),
    ).toEqual(
      [
        [ADMIN, 'secinv.privileged-exploitable-vulnerability'],
        [EXPOSED, 'secinv.exposed-exploitable-critical-vulnerability'],
        [EXPOSED, KEV_RISK],
        [SECRETS, 'secinv.exposed-secret'],
      ].sort(),
    );
    const imported = rows.find((r) => r.id === 'imported-risk');
    expect(imported?.derived).toBe(0);
    const kev = JSON.parse(rows.find((r) => r.risk_type_id === KEV_RISK)!.doc) as Record<string, unknown>;
    expect(kev).toMatchObject({
      id: derivedRiskId(TENANT_A, KEV_RISK, EXPOSED),
      organizationId: ORG_A,
      integrationId: INT,
      discoveredAt: '2024-05-01T00:00:00.000Z',
      lifecycleState: 'OPEN',
      likelihood: 10,
      impact: 9.5,
      score: 9.5,
      severityLevel: 'CRITICAL',
    });
    expect((kev.factors as { key: string }[]).map((f) => f.key)).toEqual([
      'publicExposure',
      'knownExploited',
      'cvssExploitability',
      'vulnerabilitySeverity',
      'productionEnvironment',
    ]);
    // The other tenant's identical asset has no derived risk: derivation ran for tenant A only.
    expect(await risks(TENANT_B)).toEqual([]);
  });

  it('re-deriving changes nothing, byte for byte, and keeps discoveredAt', async () => {
    await t.storage.deriveRisks(TENANT_A, '2024-05-01T00:00:00.000Z');
    const before = await risks();
    expect(await t.storage.deriveRisks(TENANT_A, '2024-06-01T00:00:00.000Z')).toMatchObject({
      added: 0,
      updated: 0,
      removed: 0,
    });
    expect(await risks()).toEqual(before);
  });

  it('a dismissal is remembered across re-derivations, and when the risk leaves and comes back', async () => {
    await t.storage.deriveRisks(TENANT_A, '2024-05-01T00:00:00.000Z');
    const id = derivedRiskId(TENANT_A, KEV_RISK, EXPOSED);
    expect(await t.storage.setRiskLifecycle(TENANT_A, id, 'DISMISSED_ACCEPTED', '2024-05-02T00:00:00.000Z')).toBe(true);
    await t.storage.deriveRisks(TENANT_A, '2024-05-03T00:00:00.000Z');
    expect((await risks()).find((r) => r.id === id)?.lifecycle_state).toBe('DISMISSED_ACCEPTED');

    // No longer exposed: the exposure rules' risks leave; the imported risk stays.
    await importRecords(t.storage, inventory(false));
    const gone = await t.storage.deriveRisks(TENANT_A, '2024-05-04T00:00:00.000Z');
    expect(gone?.removed).toBe(2);
    expect((await risks()).map((r) => r.id)).not.toContain(id);
    expect((await risks()).map((r) => r.id)).toContain('imported-risk');

    await importRecords(t.storage, inventory(true));
    await t.storage.deriveRisks(TENANT_A, '2024-05-05T00:00:00.000Z');
    const back = (await risks()).find((r) => r.id === id)!;
    expect(back.lifecycle_state).toBe('DISMISSED_ACCEPTED');
    expect(JSON.parse(back.doc)).toMatchObject({
      lifecycleState: 'DISMISSED_ACCEPTED',
      discoveredAt: '2024-05-05T00:00:00.000Z',
    });

    expect(await t.storage.setRiskLifecycle(TENANT_A, id, 'OPEN', '2024-05-06T00:00:00.000Z')).toBe(true);
    expect(JSON.parse((await risks()).find((r) => r.id === id)!.doc)).toMatchObject({ lifecycleState: 'OPEN' });
  });

  it('an unknown risk id, or another tenant’s, changes nothing', async () => {
    await t.storage.deriveRisks(TENANT_B, '2024-05-01T00:00:00.000Z');
    const foreign = (await risks(TENANT_B))[0]!.id;
    const before = await risks(TENANT_B);
    expect(
      await t.storage.setRiskLifecycle(TENANT_A, foreign, 'DISMISSED_NOT_A_RISK', '2024-05-02T00:00:00.000Z'),
    ).toBe(false);
    expect(await t.storage.setRiskLifecycle(TENANT_A, 'no-such-risk', 'OPEN', '2024-05-02T00:00:00.000Z')).toBe(false);
    expect(await risks(TENANT_B)).toEqual(before);
    expect(
      await t.storage.deriveRisks('33333333-3333-4333-8333-333333333333', '2024-05-02T00:00:00.000Z'),
    ).toBeUndefined();
  });

  it('an exempted finding is not cited: its risk leaves', async () => {
    await t.storage.deriveRisks(TENANT_A, '2024-05-01T00:00:00.000Z');
    await importRecords(t.storage, [
      [
        'exemption',
        {
          tenantId: TENANT_A,
          exemptionId: uuidFor('log4j'),
          exemption: { name: 'log4j', reason: 'mitigated', rules: [{ vulnerabilityId: 'CVE-2021-44228' }] },
        },
      ],
    ]);
    await t.storage.deriveRisks(TENANT_A, '2024-05-02T00:00:00.000Z');
    expect((await risks()).filter((r) => r.primary_asset_id === EXPOSED && r.derived === 1)).toEqual([]);
  });

  /** Each derived risk's columns as its document says them: the filters and sorts read the columns. */
  const columnsAndDocuments = async () =>
    (
      await raw.db
        .selectFrom('risks')
        .select(['id', 'score', 'severity_level', 'integration_id', 'resource_type', 'lifecycle_state', 'doc'])
        .where('tenant_id', '=', TENANT_A)
        .where('derived', '=', 1)
        .orderBy('id')
        .execute()
    ).map((r) => {
      const doc = JSON.parse(Buffer.from(r.doc).toString('utf8')) as Record<string, unknown> & {
        meta: { resourceType: string | null };
      };
      return {
        columns: [Number(r.score), r.severity_level, r.integration_id, r.resource_type, r.lifecycle_state],
        doc: [doc.score, doc.severityLevel, doc.integrationId, doc.meta.resourceType, doc.lifecycleState],
      };
    });

  it('EPSS scores from the feed raise likelihood; a changed EPSS file re-derives in the same transaction', async () => {
    await t.storage.deriveRisks(TENANT_A, '2024-05-01T00:00:00.000Z');
    const scoreOfAdmin = async () =>
      (JSON.parse((await risks()).find((r) => r.primary_asset_id === ADMIN)!.doc) as { score: number }).score;
    const before = await scoreOfAdmin();
    const load = await t.storage.loadFeeds(
      [
        {
          feed: 'epss',
          version: 'test',
          source: 'epss.csv',
          entries: [{ cveId: 'CVE-2024-0003', epss: 0.5, percentile: 0.97 }],
        },
      ],
      '2024-05-02T00:00:00.000Z',
    );
    expect(load.risks.updated).toBeGreaterThanOrEqual(1);
    const doc = JSON.parse((await risks()).find((r) => r.primary_asset_id === ADMIN)!.doc) as {
      factors: { key: string; value: number; meta: Record<string, unknown> }[];
      likelihood: number;
    };
    expect(doc.factors.find((f) => f.key === 'epss')).toMatchObject({
      value: 1.5,
      meta: { epss: 0.5, percentile: 0.97 },
    });
    expect(doc.likelihood).toBe(4.5);
    // The update wrote the columns that moved with the document.
    expect(await scoreOfAdmin()).toBeGreaterThan(before);
    const stored = await columnsAndDocuments();
    expect(stored.length).toBeGreaterThan(0);
    for (const { columns, doc: fields } of stored) expect(columns).toEqual(fields);
  });

  it('the rules on a thread of their own write what they write inline, byte for byte', async () => {
    const at = '2024-05-01T00:00:00.000Z';
    // A dismissed risk that left: both ways must give it back its state when it is derived again.
    await t.storage.deriveRisks(TENANT_A, at);
    const dismissed = derivedRiskId(TENANT_A, KEV_RISK, EXPOSED);
    expect(await t.storage.setRiskLifecycle(TENANT_A, dismissed, 'DISMISSED_ACCEPTED', at)).toBe(true);
    const derive = async (computer: Parameters<typeof deriveTenantRisks>[4]) => {
      await raw.withTenant(TENANT_A, (db) =>
        db.deleteFrom('risks').where('tenant_id', '=', TENANT_A).where('derived', '=', 1).execute(),
      );
      const counts = await raw.withTenant(TENANT_A, (db) => deriveTenantRisks(db, TENANT_A, 'all', at, computer));
      return { counts, stored: await risks() };
    };
    const inline = await derive(inlineComputer);
    expect(inline.counts.added).toBeGreaterThan(1);
    expect(inline.stored.find((r) => r.id === dismissed)?.lifecycle_state).toBe('DISMISSED_ACCEPTED');
    const thread = threadComputer();
    try {
      expect(await derive(thread)).toEqual(inline);
    } finally {
      await thread.close();
    }
  });

  it('a scanned asset’s riskScore is its highest OPEN risk score; an imported asset keeps its own', async () => {
    expect(await riskScoreOf(SECRETS)).toEqual([1.5, 1.5]);
    await t.storage.deriveRisks(TENANT_A, '2024-05-01T00:00:00.000Z');
    const secret = (await risks()).find((r) => r.primary_asset_id === SECRETS)!;
    const score = (JSON.parse(secret.doc) as { score: number }).score;
    expect(score).toBeGreaterThan(0);
    expect(await riskScoreOf(SECRETS)).toEqual([score, score]);
    expect(await riskScoreOf(EXPOSED)).toEqual([1.5, 1.5]);
    await t.storage.setRiskLifecycle(TENANT_A, secret.id, 'DISMISSED_NOT_A_RISK', '2024-05-02T00:00:00.000Z');
    expect(await riskScoreOf(SECRETS)).toEqual([0, 0]);
  });
});
