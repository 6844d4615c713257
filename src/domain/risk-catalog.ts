// The rule catalog of docs/RISKS.md, rendered from the rules and factors themselves (with a worked example per rule,
// computed by the rule), so the document cannot drift: `npm run docs:risks` writes it, a unit test compares.
import type { FailedCheck } from './checks.js';
import type { RiskSubject, SubjectFinding } from './risk-engine.js';
import { FACTOR_DEFINITIONS } from './risk-factors.js';
import { deriveRisks, madeBy, RULES } from './risk-rules.js';

const finding = (over: Partial<SubjectFinding>): SubjectFinding => ({
  vulnerabilityId: 'CVE-2021-44228',
  title: 'log4j-core: Remote code injection in Log4j',
  severity: 'CRITICAL',
  hasKev: true,
  hasExploit: true,
  isExploitable: true,
  epss: { score: 0.94358, percentile: 0.99961, cveId: 'CVE-2021-44228' },
  knownExploit: {
    dateAdded: '2021-12-10',
    dueDate: '2021-12-24',
    requiredAction:
      'For all affected software assets for which updates exist, the only acceptable remediation actions are: 1) Apply updates; OR 2) remove affected assets from agency networks.',
  },
  exploitIds: ['50592'],
  packages: [
    { packageName: 'org.apache.logging.log4j:log4j-core', installedVersion: '2.14.1', fixedVersion: '2.15.0' },
  ],
  ...over,
});

const subject = (over: Partial<RiskSubject['asset']>, rest: Partial<RiskSubject> = {}): RiskSubject => ({
  tenantId: '00000000-0000-4000-8000-000000000001',
  organizationId: '00000000-0000-4000-8000-000000000002',
  asset: {
    id: 'sirn:assets:00000000-0000-4000-8000-000000000001:aws:ecr:image:us-east-1:payments/api@sha256:0f1e',
    name: '123456789012.dkr.ecr.us-east-1.amazonaws.com/payments/api:1.4',
    resourceType: 'AWS::ECR::Image',
    region: 'us-east-1',
    integrationId: null,
    isPubliclyExposed: false,
    hasAdminPrivileges: false,
    hasOverlyPermissivePrivileges: false,
    isProduction: false,
    secrets: [],
    ...over,
  },
  findings: [],
  checks: [],
  ...rest,
});

const check: FailedCheck = {
  checkId: 'iam_role_administratoraccess_policy_permissive_trust_relationship',
  source: 'prowler',
  title: 'Ensure IAM Roles with attached AdministratorAccess policy have a well defined trust relationship',
  description: null,
  severity: 'HIGH',
  remediation: 'Apply the principle of least privilege.',
  references: [],
  detail: null,
};

/** One example subject per rule, in catalog order: what the example column of the catalog is computed from. */
export const RULE_EXAMPLES: readonly { text: string; subject: RiskSubject }[] = [
  {
    text: 'a publicly exposed production image with CVE-2021-44228 (CRITICAL, KEV, Exploit-DB, EPSS 0.94358)',
    subject: subject({ isPubliclyExposed: true, isProduction: true }, { findings: [finding({})] }),
  },
  {
    text: 'an internal image (not exposed) with CVE-2021-44228 (CRITICAL, KEV, Exploit-DB, EPSS 0.94358)',
    subject: subject({}, { findings: [finding({})] }),
  },
  {
    text: 'a publicly exposed image with one CRITICAL finding exploitable by its vector, EPSS 0.00043, nothing else',
    subject: subject(
      { isPubliclyExposed: true },
      {
        findings: [
          finding({
            vulnerabilityId: 'CVE-2023-0795',
            hasKev: false,
            hasExploit: false,
            knownExploit: null,
            exploitIds: [],
            epss: { score: 0.00043, percentile: 0.0663, cveId: 'CVE-2023-0795' },
          }),
        ],
      },
    ),
  },
  {
    text: 'a role with administrative privileges and one HIGH finding exploitable by its vector, no EPSS score',
    subject: subject(
      { hasAdminPrivileges: true },
      {
        findings: [
          finding({
            severity: 'HIGH',
            hasKev: false,
            hasExploit: false,
            knownExploit: null,
            exploitIds: [],
            epss: null,
          }),
        ],
      },
    ),
  },
  {
    text: 'an exposed image with one HIGH secret (an AWS access key in /app/.env)',
    subject: subject(
      { isPubliclyExposed: true, secrets: [{ severity: 'HIGH', title: 'AWS Access Key ID', target: '/app/.env' }] },
      {},
    ),
  },
  {
    text: 'an IAM role where Prowler failed a HIGH check, in production',
    subject: subject({ isProduction: true, resourceType: 'AWS::IAM::Role' }, { checks: [check] }),
  },
];

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

function example(index: number): string {
  const entry = RULE_EXAMPLES[index];
  const rule = RULES[index];
  if (!entry || !rule) return '';
  const risk = deriveRisks(entry.subject).find((r) => madeBy(rule, r.riskTypeId));
  if (!risk) return `${entry.text}: no risk`;
  const side = (s: 'likelihood' | 'impact') =>
    risk.factors
      .filter((f) => FACTOR_DEFINITIONS[f.key ?? '']?.side === s)
      .map((f) => `${f.key} ${f.value}`)
      .join(' + ');
  return `${entry.text}: likelihood ${risk.likelihood} (${side('likelihood')}), impact ${risk.impact} (${side('impact')}), score ${risk.score}, ${risk.severityLevel}`;
}

/** The two tables of docs/RISKS.md between its catalog markers. */
export function renderCatalog(): string {
  const rules = RULES.map((rule, i) => {
    const factors = (s: 'likelihood' | 'impact') =>
      rule.factors
        .filter((k) => FACTOR_DEFINITIONS[k]?.side === s)
        .map((k) => `\`${k}\``)
        .join(', ');
    return `| \`${rule.riskTypeId}\` | ${cell(rule.title)}: ${cell(rule.condition)} | ${factors('likelihood')} | ${factors('impact')} | ${cell(example(i))} |`;
  });
  const factors = Object.values(FACTOR_DEFINITIONS).map(
    (f) => `| \`${f.key}\` | ${cell(f.title)} | ${f.side} | ${cell(f.weight)} | ${f.verificationState} |`,
  );
  return [
    '### Rules',
    '',
    '| riskTypeId | condition | likelihood factors | impact factors | example |',
    '|---|---|---|---|---|',
    ...rules,
    '',
    '### Factors',
    '',
    '| key | title | side | points (weight) | verificationState |',
    '|---|---|---|---|---|',
    ...factors,
  ].join('\n');
}

export const CATALOG_START = '<!-- rule catalog: generated by `npm run docs:risks` from src/domain/risk-*.ts -->';
export const CATALOG_END = '<!-- end of rule catalog -->';
