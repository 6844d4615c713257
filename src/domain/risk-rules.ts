// The risk rules: each a small pure function from an asset's subject (its findings, secrets, failed checks, feeds and
// environment) to zero or more risk outcomes. Their riskTypeIds are stable: dismissals and risk ids depend on them.
// docs/RISKS.md is rendered from this catalog (src/domain/risk-catalog.ts) and a test keeps the two equal.
import {
  assetLabel,
  checkFactors,
  cite,
  contextFactors,
  exposureResolution,
  FACTOR_DEFINITIONS,
  findingFactors,
  findingResolutions,
  listed,
  plural,
  privilegeResolution,
  secretFactors,
  type FactorKey,
} from './risk-factors.js';
import {
  scoreOutcome,
  type DerivedRisk,
  type RiskSubject,
  type RuleOutcome,
  type SubjectFinding,
} from './risk-engine.js';

/** The catalog's riskTypeId of the failed-check rule: each of its risks has the check's own id instead. */
export const CHECK_RULE_ID = '<check id>';

/** Whether a risk is one the rule makes. */
export const madeBy = (rule: RiskRule, riskTypeId: string | null): boolean =>
  rule.riskTypeId === CHECK_RULE_ID || rule.riskTypeId === riskTypeId;

export interface RiskRule {
  /** The riskTypeId of the risks it makes (for the check rule: the check's own id, shown as a pattern). */
  riskTypeId: string;
  title: string;
  /** When it holds, in words. */
  condition: string;
  /** The factors it may count, likelihood then impact. */
  factors: readonly FactorKey[];
  evaluate(subject: RiskSubject): RuleOutcome[];
}

/** The impact factors of the asset's context, which every rule counts. */
const CONTEXT_IMPACT = [
  'adminPrivileges',
  'overlyPermissivePrivileges',
  'productionEnvironment',
] as const satisfies readonly FactorKey[];

const VULNERABILITY_FACTORS = [
  'publicExposure',
  'knownExploited',
  'publicExploit',
  'epss',
  'cvssExploitability',
  'vulnerabilitySeverity',
  ...CONTEXT_IMPACT,
] as const satisfies readonly FactorKey[];

const vulnerabilities = (n: number) => plural(n, 'vulnerability', 'vulnerabilities');

/** A rule over the asset's findings: it holds when the asset qualifies and some finding is cited. */
function findingRule(spec: {
  riskTypeId: string;
  title: string;
  condition: string;
  applies: (subject: RiskSubject) => boolean;
  cites: (f: SubjectFinding) => boolean;
  describe: (subject: RiskSubject, cited: SubjectFinding[]) => string;
}): RiskRule {
  return {
    riskTypeId: spec.riskTypeId,
    title: spec.title,
    condition: spec.condition,
    factors: VULNERABILITY_FACTORS,
    evaluate(subject) {
      if (!spec.applies(subject)) return [];
      const cited = cite(subject.findings, spec.cites);
      if (cited.length === 0) return [];
      const factors = [...contextFactors(subject, true), ...findingFactors(cited)];
      const resolutions = findingResolutions(cited);
      if (subject.asset.isPubliclyExposed) resolutions.push(exposureResolution(subject));
      if (subject.asset.hasAdminPrivileges || subject.asset.hasOverlyPermissivePrivileges)
        resolutions.push(privilegeResolution(subject));
      return [{ riskTypeId: spec.riskTypeId, description: spec.describe(subject, cited), factors, resolutions }];
    },
  };
}

const ids = (cited: readonly SubjectFinding[]) => listed(cited.map((f) => f.vulnerabilityId));

export const RULES: readonly RiskRule[] = [
  findingRule({
    riskTypeId: 'secinv.exposed-kev-vulnerability',
    title: 'Publicly exposed asset with a known-exploited vulnerability',
    condition:
      'The asset is publicly exposed and a finding on it that no exemption matches is in the CISA KEV catalog.',
    applies: (s) => s.asset.isPubliclyExposed,
    cites: (f) => f.hasKev,
    describe: (s, cited) =>
      `${assetLabel(s)} is publicly exposed and has ${vulnerabilities(cited.length)} known to be exploited in the wild (CISA KEV): ${ids(cited)}.`,
  }),
  findingRule({
    riskTypeId: 'secinv.kev-vulnerability',
    title: 'Known-exploited vulnerability on an asset that is not publicly exposed',
    condition:
      'The asset is not publicly exposed and a finding on it that no exemption matches is in the CISA KEV catalog (an exposed asset has the rule above instead).',
    applies: (s) => !s.asset.isPubliclyExposed,
    cites: (f) => f.hasKev,
    describe: (s, cited) =>
      `${assetLabel(s)} has ${vulnerabilities(cited.length)} known to be exploited in the wild (CISA KEV): ${ids(cited)}. It is not publicly exposed, but an attacker inside the network can use them.`,
  }),
  findingRule({
    riskTypeId: 'secinv.exposed-exploitable-critical-vulnerability',
    title: 'Publicly exposed asset with an exploitable critical vulnerability',
    condition:
      'The asset is publicly exposed and a CRITICAL finding on it that no exemption matches is exploitable (CVSS v3 exploitability above 1.0).',
    applies: (s) => s.asset.isPubliclyExposed,
    cites: (f) => f.severity === 'CRITICAL' && f.isExploitable,
    describe: (s, cited) =>
      `${assetLabel(s)} is publicly exposed and has ${plural(cited.length, 'critical vulnerability', 'critical vulnerabilities')} exploitable over its attack vector: ${ids(cited)}.`,
  }),
  findingRule({
    riskTypeId: 'secinv.privileged-exploitable-vulnerability',
    title: 'Asset with admin or overly permissive privileges and an exploitable vulnerability',
    condition:
      'The asset has administrative or overly permissive privileges and a finding on it that no exemption matches is exploitable (CVSS v3 exploitability above 1.0).',
    applies: (s) => s.asset.hasAdminPrivileges || s.asset.hasOverlyPermissivePrivileges,
    cites: (f) => f.isExploitable,
    describe: (s, cited) =>
      `${assetLabel(s)} holds ${s.asset.hasAdminPrivileges ? 'administrative' : 'overly permissive'} privileges and has ${vulnerabilities(cited.length)} exploitable over its attack vector: ${ids(cited)}. Whoever exploits it acts with those privileges.`,
  }),
  {
    riskTypeId: 'secinv.exposed-secret',
    title: 'Exposed secret on an asset',
    condition: 'A scanner found a secret (a key, a token, a password) on the asset: any of its `<level>Secrets`.',
    factors: ['publicExposure', 'exposedSecret', 'secretSeverity', ...CONTEXT_IMPACT],
    evaluate(subject) {
      const secrets = subject.asset.secrets;
      if (secrets.length === 0) return [];
      const titles = [...new Set(secrets.map((s) => (s.target ? `${s.title} in ${s.target}` : s.title)))];
      return [
        {
          riskTypeId: 'secinv.exposed-secret',
          description: `${plural(secrets.length, 'secret was', 'secrets were')} found on ${assetLabel(subject)}: ${listed(titles)}.`,
          // scoreOutcome orders factors by the catalog: likelihood first, then impact.
          factors: [...contextFactors(subject, true), ...secretFactors(subject)],
          resolutions: [
            {
              key: 'rotate-secrets',
              type: 'ROTATE_SECRET',
              title: `Rotate every secret found on ${assetLabel(subject)} (revoke the old value), then remove it from the artifact and load it from a secret store at run time.`,
            },
            ...(subject.asset.isPubliclyExposed ? [exposureResolution(subject)] : []),
          ],
        },
      ];
    },
  },
  {
    riskTypeId: CHECK_RULE_ID,
    title: 'Failed configuration check (Prowler, Trivy misconfiguration)',
    condition:
      'A scanner reported the check as failed on the asset (Prowler status FAIL, Trivy misconfiguration status FAIL), and no later report of the same scanner passed it or left it out of a complete scan.',
    factors: ['publicExposure', 'failedCheck', 'checkSeverity', ...CONTEXT_IMPACT],
    evaluate(subject) {
      return subject.checks.map((check) => {
        const lines = [check.title ?? check.checkId, check.detail, check.description].filter((t) => t) as string[];
        return {
          riskTypeId: check.checkId,
          description: lines.join(' — '),
          factors: [...contextFactors(subject, true), ...checkFactors(check)],
          resolutions: [
            {
              key: `check:${check.checkId}`,
              type: 'REMEDIATE_CHECK' as const,
              title:
                check.remediation ??
                `Fix what ${check.source} check ${check.checkId} reports${check.references[0] ? ` (see ${check.references[0]})` : ''}.`,
            },
            ...check.references.slice(0, 3).map((url, i) => ({
              key: `check:${check.checkId}:reference:${i + 1}`,
              type: 'REMEDIATE_CHECK' as const,
              title: `Reference: ${url}`,
            })),
          ],
        };
      });
    },
  },
];

/**
 * Every risk the rules derive for one asset, in catalog order (and a check rule's risks in check id order): the same
 * subject gives the same risks, byte for byte.
 */
export function deriveRisks(subject: RiskSubject): DerivedRisk[] {
  const ordered = {
    ...subject,
    checks: [...subject.checks].sort((a, b) => (a.checkId < b.checkId ? -1 : a.checkId > b.checkId ? 1 : 0)),
  };
  const risks = RULES.flatMap((rule) => rule.evaluate(ordered)).map((o) =>
    scoreOutcome(ordered, o, FACTOR_DEFINITIONS),
  );
  // One risk per (risk type, asset): a check id reported by two scanners on one asset is one risk (the first wins).
  const seen = new Set<string>();
  return risks.filter((r) => (seen.has(r.id) ? false : (seen.add(r.id), true)));
}
