// The risk rules and their arithmetic, one by one, on hand-made subjects (docs/RISKS.md).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { FailedCheck } from '../../src/domain/checks.js';
import { CATALOG_END, CATALOG_START, renderCatalog, RULE_EXAMPLES } from '../../src/domain/risk-catalog.js';
import {
  citesExploitable,
  derivedRiskId,
  isCitable,
  riskScore,
  severityOfScore,
  sideTotal,
  toTenths,
  type RiskSubject,
  type SubjectFinding,
} from '../../src/domain/risk-engine.js';
import { FACTOR_DEFINITIONS } from '../../src/domain/risk-factors.js';
import { deriveRisks, madeBy, RULES } from '../../src/domain/risk-rules.js';

const TENANT = '11111111-1111-4111-8111-111111111111';

const finding = (over: Partial<SubjectFinding> = {}): SubjectFinding => ({
  vulnerabilityId: 'CVE-2024-0001',
  title: null,
  severity: 'HIGH',
  hasKev: false,
  hasExploit: false,
  isExploitable: true,
  epss: null,
  knownExploit: null,
  exploitIds: [],
  packages: [{ packageName: 'openssl', installedVersion: '3.0.1', fixedVersion: '3.0.7' }],
  ...over,
});

const subject = (asset: Partial<RiskSubject['asset']> = {}, rest: Partial<RiskSubject> = {}): RiskSubject => ({
  tenantId: TENANT,
  organizationId: '22222222-2222-4222-8222-222222222222',
  asset: {
    id: 'sirn:assets:x:aws:ec2:instance:us-east-1:i-1',
    name: 'web-1',
    resourceType: 'AWS::EC2::Instance',
    region: 'us-east-1',
    integrationId: null,
    isPubliclyExposed: false,
    hasAdminPrivileges: false,
    hasOverlyPermissivePrivileges: false,
    isProduction: false,
    secrets: [],
    ...asset,
  },
  findings: [],
  checks: [],
  ...rest,
});

const check = (over: Partial<FailedCheck> = {}): FailedCheck => ({
  checkId: 's3_bucket_public_access',
  source: 'prowler',
  title: 'Ensure S3 buckets are not public',
  description: 'Public buckets leak data.',
  severity: 'CRITICAL',
  remediation: 'Block public access.',
  references: ['https://docs.aws.amazon.com/s3'],
  detail: 'Bucket b is public.',
  ...over,
});

const sideOf = (f: { meta: object | null }) => (f.meta as { side?: string } | null)?.side;

const types = (s: RiskSubject) => deriveRisks(s).map((r) => r.riskTypeId);

describe('scoring arithmetic', () => {
  it('rounds to tenths half up, without float error', () => {
    expect(toTenths(0.725)).toBe(7);
    expect(toTenths(0.75)).toBe(8);
    expect(toTenths(7.25 / 10)).toBe(7);
    expect(toTenths(2.8307)).toBe(28);
  });
  it('a side is the sum of its rounded values, capped at 10', () => {
    expect(sideTotal([3, 4, 2.8307])).toBe(9.8);
    expect(sideTotal([3, 4, 2, 2.8, 3])).toBe(10);
    expect(sideTotal([])).toBe(0);
  });
  it('score = likelihood × impact / 10, half up, and its severity band', () => {
    expect(riskScore(10, 9.5)).toBe(9.5);
    expect(riskScore(6.5, 6.5)).toBe(4.2); // 4.225
    expect(riskScore(9.5, 9.5)).toBe(9); // 9.025
    expect(riskScore(7.5, 9.5)).toBe(7.1); // 7.125
    expect(riskScore(5, 1)).toBe(0.5);
    expect([9, 8.9, 7, 6.9, 4, 3.9, 0].map(severityOfScore)).toEqual([
      'CRITICAL',
      'HIGH',
      'HIGH',
      'MEDIUM',
      'MEDIUM',
      'LOW',
      'LOW',
    ]);
  });
  it('risk ids are stable per (tenant, risk type, asset) and differ when any of them does', () => {
    const a = derivedRiskId(TENANT, 't', 'asset');
    expect(derivedRiskId(TENANT, 't', 'asset')).toBe(a);
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(new Set([a, derivedRiskId(TENANT, 'u', 'asset'), derivedRiskId(TENANT, 't', 'other')]).size).toBe(3);
    expect(derivedRiskId('33333333-3333-4333-8333-333333333333', 't', 'asset')).not.toBe(a);
  });
  it('risk ids stay those already stored, non-ASCII asset ids included', () => {
    const tenant = '22222222-2222-4222-8222-222222222222';
    expect(derivedRiskId(tenant, 't', 'asset')).toBe('d25175f3-c86c-5b29-affb-95952389341a');
    const image = 'sirn:assets:x:aws:ecr:image:eu-west-1:café/ü@sha256:1';
    expect(derivedRiskId(tenant, 'secinv.exposed-kev-vulnerability', image)).toBe(
      'c9e461a3-d90e-5819-aa96-3414d7327923',
    );
  });
});

describe('secinv.exposed-kev-vulnerability', () => {
  const kev = finding({ vulnerabilityId: 'CVE-2021-44228', severity: 'CRITICAL', hasKev: true });
  it('holds on an exposed asset with a KEV finding, not on an unexposed one or without KEV', () => {
    expect(types(subject({ isPubliclyExposed: true }, { findings: [kev] }))).toContain(
      'secinv.exposed-kev-vulnerability',
    );
    expect(types(subject({}, { findings: [kev] }))).not.toContain('secinv.exposed-kev-vulnerability');
    expect(types(subject({ isPubliclyExposed: true }, { findings: [finding()] }))).not.toContain(
      'secinv.exposed-kev-vulnerability',
    );
  });
  it('counts exposure, KEV, exploit, EPSS and exploitability; severity and production; values add up', () => {
    const risk = deriveRisks(
      subject(
        { isPubliclyExposed: true, isProduction: true },
        {
          findings: [
            {
              ...kev,
              hasExploit: true,
              exploitIds: ['50592'],
              epss: { score: 0.5, percentile: 0.9, cveId: kev.vulnerabilityId },
            },
          ],
        },
      ),
    ).find((r) => r.riskTypeId === 'secinv.exposed-kev-vulnerability')!;
    expect(risk.factors.map((f) => [f.key, f.value])).toEqual([
      ['publicExposure', 3],
      ['knownExploited', 4],
      ['publicExploit', 2],
      ['epss', 1.5],
      ['cvssExploitability', 3],
      ['vulnerabilitySeverity', 8],
      ['productionEnvironment', 1.5],
    ]);
    expect(risk.likelihood).toBe(10);
    expect(risk.impact).toBe(9.5);
    expect(risk.score).toBe(9.5);
    expect(risk.severityLevel).toBe('CRITICAL');
    expect(risk.factors.find((f) => f.key === 'publicExploit')?.meta).toMatchObject({ exploitIds: ['50592'] });
    expect(risk.factors.find((f) => f.key === 'epss')?.meta).toMatchObject({ epss: 0.5, percentile: 0.9 });
    expect(risk.primaryAssetId).toBe('sirn:assets:x:aws:ec2:instance:us-east-1:i-1');
    expect(risk.meta).toEqual({
      assetName: 'web-1',
      resourceType: 'AWS::EC2::Instance',
      fullResourceName: 'sirn:assets:x:aws:ec2:instance:us-east-1:i-1',
    });
    expect(risk.description).toContain('CVE-2021-44228');
  });
  it('tells what to do: upgrade the package to its fixed version, restrict exposure, and CISA’s required action', () => {
    const risk = deriveRisks(
      subject(
        { isPubliclyExposed: true },
        {
          findings: [
            {
              ...kev,
              knownExploit: { dateAdded: '2021-12-10', dueDate: '2021-12-24', requiredAction: 'Apply updates.' },
              packages: [
                { packageName: 'log4j-core', installedVersion: '2.14.1', fixedVersion: '2.15.0' },
                { packageName: 'log4j-api', installedVersion: '2.14.1', fixedVersion: null },
              ],
            },
          ],
        },
      ),
    )[0]!;
    expect(risk.resolutions.map((r) => [r.type, r.title])).toEqual([
      ['UPGRADE_PACKAGE', 'Upgrade log4j-core from 2.14.1 to 2.15.0 (fixes CVE-2021-44228).'],
      [
        'MITIGATE_VULNERABILITY',
        "No fixed version of log4j-api is known for CVE-2021-44228: remove or isolate the package, or apply the vendor's mitigation.",
      ],
      ['APPLY_REQUIRED_ACTION', "CISA's required action for CVE-2021-44228 (due 2021-12-24): Apply updates."],
      ['RESTRICT_EXPOSURE', expect.stringContaining('Remove the public exposure of web-1') as string],
    ]);
  });
});

describe('secinv.kev-vulnerability', () => {
  it('holds for a KEV finding on an asset that is not exposed, and gives way to the exposed rule', () => {
    const kev = finding({
      vulnerabilityId: 'CVE-2021-44228',
      severity: 'CRITICAL',
      hasKev: true,
      isExploitable: false,
    });
    expect(types(subject({}, { findings: [kev] }))).toEqual(['secinv.kev-vulnerability']);
    expect(types(subject({ isPubliclyExposed: true }, { findings: [kev] }))).toEqual([
      'secinv.exposed-kev-vulnerability',
    ]);
    const [risk] = deriveRisks(subject({}, { findings: [kev] }));
    expect([risk?.likelihood, risk?.impact, risk?.score, risk?.severityLevel]).toEqual([4, 8, 3.2, 'LOW']);
    expect(risk?.factors.map((f) => f.key)).toEqual(['knownExploited', 'vulnerabilitySeverity']);
  });
});

describe('secinv.exposed-exploitable-critical-vulnerability', () => {
  it('holds for an exploitable CRITICAL finding on an exposed asset only', () => {
    const id = 'secinv.exposed-exploitable-critical-vulnerability';
    expect(types(subject({ isPubliclyExposed: true }, { findings: [finding({ severity: 'CRITICAL' })] }))).toEqual([
      id,
    ]);
    expect(types(subject({ isPubliclyExposed: true }, { findings: [finding({ severity: 'HIGH' })] }))).toEqual([]);
    expect(
      types(
        subject(
          { isPubliclyExposed: true },
          { findings: [finding({ severity: 'CRITICAL', isExploitable: false, hasKev: true })] },
        ),
      ),
    ).toEqual(['secinv.exposed-kev-vulnerability']);
    expect(types(subject({}, { findings: [finding({ severity: 'CRITICAL' })] }))).toEqual([]);
  });
  it('cites the most urgent findings first and names at most ten', () => {
    const findings = Array.from({ length: 12 }, (_, i) =>
      finding({ vulnerabilityId: `CVE-2024-${String(i).padStart(4, '0')}`, severity: 'CRITICAL' }),
    );
    findings.push(finding({ vulnerabilityId: 'CVE-2000-9999', severity: 'CRITICAL', hasExploit: true }));
    const [risk] = deriveRisks(subject({ isPubliclyExposed: true }, { findings }));
    expect(risk?.description).toMatch(/13 critical vulnerabilities .*: CVE-2000-9999, CVE-2024-0000, .* and 3 more\.$/);
    expect(risk?.factors.find((f) => f.key === 'cvssExploitability')?.meta).toMatchObject({ count: 13 });
  });
});

describe('secinv.privileged-exploitable-vulnerability', () => {
  const id = 'secinv.privileged-exploitable-vulnerability';
  it('holds with admin or overly permissive privileges and an exploitable finding', () => {
    expect(types(subject({ hasAdminPrivileges: true }, { findings: [finding()] }))).toEqual([id]);
    expect(types(subject({ hasOverlyPermissivePrivileges: true }, { findings: [finding()] }))).toEqual([id]);
    expect(types(subject({}, { findings: [finding()] }))).toEqual([]);
    expect(types(subject({ hasAdminPrivileges: true }, { findings: [finding({ isExploitable: false })] }))).toEqual([]);
  });
  it('counts admin privileges (2.5) rather than overly permissive ones (1.5), and proposes least privilege', () => {
    const [admin] = deriveRisks(
      subject({ hasAdminPrivileges: true, hasOverlyPermissivePrivileges: true }, { findings: [finding()] }),
    );
    expect(admin?.factors.filter((f) => sideOf(f) === 'impact').map((f) => [f.key, f.value])).toEqual([
      ['vulnerabilitySeverity', 6.5],
      ['adminPrivileges', 2.5],
    ]);
    expect(admin?.impact).toBe(9);
    expect(admin?.resolutions.map((r) => r.type)).toEqual(['UPGRADE_PACKAGE', 'REDUCE_PRIVILEGES']);
  });
});

describe('secinv.exposed-secret', () => {
  it('holds when the asset has a secret; its worst severity is the impact', () => {
    const s = subject({ isPubliclyExposed: true }, {});
    expect(types(s)).toEqual([]);
    s.asset.secrets = [
      { severity: 'LOW', title: 'Generic token', target: null },
      { severity: 'CRITICAL', title: 'AWS Secret Access Key', target: '/app/.env' },
    ];
    const [risk] = deriveRisks(s);
    expect(risk?.riskTypeId).toBe('secinv.exposed-secret');
    expect(risk?.factors.map((f) => [f.key, f.value])).toEqual([
      ['publicExposure', 3],
      ['exposedSecret', 5],
      ['secretSeverity', 8],
    ]);
    expect([risk?.likelihood, risk?.impact, risk?.score, risk?.severityLevel]).toEqual([8, 8, 6.4, 'MEDIUM']);
    expect(risk?.description).toBe('2 secrets were found on web-1: Generic token, AWS Secret Access Key in /app/.env.');
    expect(risk?.resolutions[0]?.type).toBe('ROTATE_SECRET');
  });
});

describe('failed checks', () => {
  it('each failed check is a risk whose riskTypeId is the check id, with the scanner’s remediation', () => {
    const risks = deriveRisks(subject({}, { checks: [check(), check({ checkId: 'a_check', severity: 'LOW' })] }));
    expect(risks.map((r) => r.riskTypeId)).toEqual(['a_check', 's3_bucket_public_access']);
    const s3 = risks[1]!;
    expect(s3.description).toBe('Ensure S3 buckets are not public — Bucket b is public. — Public buckets leak data.');
    expect(s3.resolutions.map((r) => r.title)).toEqual([
      'Block public access.',
      'Reference: https://docs.aws.amazon.com/s3',
    ]);
    expect([s3.likelihood, s3.impact, s3.score, s3.severityLevel]).toEqual([8, 8, 6.4, 'MEDIUM']);
  });
  it('a check reported by two scanners on one asset is one risk', () => {
    expect(deriveRisks(subject({}, { checks: [check(), check({ source: 'trivy' })] }))).toHaveLength(1);
  });
});

describe('which findings storage reads (isCitable)', () => {
  it('findings that are not citable on an asset change none of its risks', () => {
    const all = [
      finding({ vulnerabilityId: 'CVE-1', severity: 'CRITICAL', hasKev: true }),
      finding({ vulnerabilityId: 'CVE-2', severity: 'CRITICAL' }),
      finding({ vulnerabilityId: 'CVE-3', severity: 'HIGH', isExploitable: false, hasExploit: true }),
      finding({ vulnerabilityId: 'CVE-4', severity: 'LOW', hasKev: true, isExploitable: false }),
    ];
    const flags = [false, true];
    for (const isPubliclyExposed of flags)
      for (const hasAdminPrivileges of flags)
        for (const hasOverlyPermissivePrivileges of flags) {
          const asset = { isPubliclyExposed, hasAdminPrivileges, hasOverlyPermissivePrivileges };
          const full = subject(asset, { findings: all });
          const read = subject(asset, { findings: all.filter((f) => isCitable(f, asset)) });
          expect(JSON.stringify(deriveRisks(read))).toBe(JSON.stringify(deriveRisks(full)));
          expect(read.findings.length).toBe(citesExploitable(asset) ? 3 : 2);
        }
  });
});

describe('determinism and the catalog', () => {
  it('the same subject gives the same risks, byte for byte, whatever the order of its checks', () => {
    const s = subject(
      { isPubliclyExposed: true, hasAdminPrivileges: true },
      { findings: [finding({ severity: 'CRITICAL', hasKev: true })], checks: [check(), check({ checkId: 'b' })] },
    );
    const reversed = { ...s, checks: [...s.checks].reverse() };
    expect(JSON.stringify(deriveRisks(s))).toBe(JSON.stringify(deriveRisks(reversed)));
    expect(deriveRisks(s).map((r) => r.riskTypeId)).toEqual([
      'secinv.exposed-kev-vulnerability',
      'secinv.exposed-exploitable-critical-vulnerability',
      'secinv.privileged-exploitable-vulnerability',
      'b',
      's3_bucket_public_access',
    ]);
  });
  it('every factor a rule counts is in the catalog, and each side adds up to likelihood and impact', () => {
    for (const { subject: s } of RULE_EXAMPLES) {
      for (const risk of deriveRisks(s)) {
        for (const f of risk.factors) expect(FACTOR_DEFINITIONS[f.key ?? '']).toBeDefined();
        const sum = (side: string) =>
          Math.min(
            10,
            risk.factors.filter((f) => sideOf(f) === side).reduce((n, f) => n + (f.value ?? 0) * 10, 0) / 10,
          );
        expect(sum('likelihood')).toBeCloseTo(risk.likelihood ?? -1, 10);
        expect(sum('impact')).toBeCloseTo(risk.impact ?? -1, 10);
      }
    }
  });
  it('each rule lists only catalog factors, and its example makes a risk of its type', () => {
    RULES.forEach((rule, i) => {
      for (const k of rule.factors) expect(FACTOR_DEFINITIONS[k]).toBeDefined();
      const risks = deriveRisks(RULE_EXAMPLES[i]!.subject);
      expect(risks.some((r) => madeBy(rule, r.riskTypeId))).toBe(true);
    });
  });
  it('docs/RISKS.md holds the catalog as the code renders it (npm run docs:risks)', () => {
    const doc = readFileSync(new URL('../../docs/RISKS.md', import.meta.url), 'utf8');
    const start = doc.indexOf(CATALOG_START) + CATALOG_START.length;
    expect(doc.slice(start, doc.indexOf(CATALOG_END)).trim()).toBe(renderCatalog());
  });
});
