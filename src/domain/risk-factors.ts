// The factors a risk rule may count, each with one weight on one side (likelihood or impact), and the helpers rules
// share to count them and to say what to do (docs/RISKS.md lists them from this table).
import { severityLevelValues, type FindingSeverity } from './enums.js';
import {
  severityPoints,
  type CountedFactor,
  type FactorDefinition,
  type RiskResolution,
  type RiskSubject,
  type SubjectFinding,
} from './risk-engine.js';

const SEVERITY_POINTS = severityPoints({ CRITICAL: 8, HIGH: 6.5, MEDIUM: 4.5, LOW: 2.5 }, 1);
const SEVERITY_WORDS = 'CRITICAL 8, HIGH 6.5, MEDIUM 4.5, LOW 2.5, any other 1';

export const FACTORS = {
  publicExposure: {
    title: 'Publicly exposed',
    side: 'likelihood',
    verificationState: 'UNVERIFIED',
    weight: '3',
  },
  knownExploited: {
    title: 'Known exploited (CISA KEV)',
    side: 'likelihood',
    verificationState: 'VERIFIED',
    weight: '4',
  },
  publicExploit: {
    title: 'Public exploit (Exploit-DB)',
    side: 'likelihood',
    verificationState: 'VERIFIED',
    weight: '2',
  },
  epss: {
    title: 'Exploit prediction (FIRST EPSS)',
    side: 'likelihood',
    verificationState: 'UNVERIFIED',
    weight: '3 × the highest EPSS score of the cited findings (0 to 3)',
  },
  cvssExploitability: {
    title: 'Exploitable by its CVSS v3 vector',
    side: 'likelihood',
    verificationState: 'UNVERIFIED',
    weight: '3',
  },
  exposedSecret: {
    title: 'Secret found on the asset',
    side: 'likelihood',
    verificationState: 'VERIFIED',
    weight: '5',
  },
  failedCheck: {
    title: 'Failed configuration check',
    side: 'likelihood',
    verificationState: 'VERIFIED',
    weight: `by the check severity: ${SEVERITY_WORDS}`,
  },
  vulnerabilitySeverity: {
    title: 'Severity of the worst cited finding',
    side: 'impact',
    verificationState: 'VERIFIED',
    weight: SEVERITY_WORDS,
  },
  secretSeverity: {
    title: 'Severity of the worst secret',
    side: 'impact',
    verificationState: 'VERIFIED',
    weight: SEVERITY_WORDS,
  },
  checkSeverity: {
    title: 'Severity of the failed check',
    side: 'impact',
    verificationState: 'VERIFIED',
    weight: SEVERITY_WORDS,
  },
  adminPrivileges: {
    title: 'Administrative privileges',
    side: 'impact',
    verificationState: 'UNVERIFIED',
    weight: '2.5',
  },
  overlyPermissivePrivileges: {
    title: 'Overly permissive privileges',
    side: 'impact',
    verificationState: 'UNVERIFIED',
    weight: '1.5 (not counted with administrative privileges)',
  },
  productionEnvironment: {
    title: 'Production environment',
    side: 'impact',
    verificationState: 'UNVERIFIED',
    weight: '1.5',
  },
} as const satisfies Record<string, Omit<FactorDefinition, 'key'>>;

export type FactorKey = keyof typeof FACTORS;

export const FACTOR_DEFINITIONS: Readonly<Record<string, FactorDefinition>> = Object.fromEntries(
  Object.entries(FACTORS).map(([key, d]) => [key, { key, ...d }]),
);

const factor = (key: FactorKey, points: number, description: string, meta: Record<string, unknown> = {}) =>
  ({ key, points, description, meta }) satisfies CountedFactor;

/** How many ids a description, a factor's meta or the resolutions name at most; the count is always given. */
export const CITE_LIMIT = 10;

const SEVERITY_ORDER: Readonly<Record<FindingSeverity, number>> = severityLevelValues;

/** Cited findings, most urgent first (severity, KEV, exploit, EPSS, then id), so every run orders them alike. */
export function cite(findings: readonly SubjectFinding[], keep: (f: SubjectFinding) => boolean): SubjectFinding[] {
  const rank = (f: SubjectFinding) => [SEVERITY_ORDER[f.severity], f.hasKev ? 1 : 0, f.hasExploit ? 1 : 0];
  return findings.filter(keep).sort((a, b) => {
    const [ra, rb] = [rank(a), rank(b)];
    for (let i = 0; i < ra.length; i += 1) if (ra[i] !== rb[i]) return (rb[i] ?? 0) - (ra[i] ?? 0);
    const epss = (b.epss?.score ?? -1) - (a.epss?.score ?? -1);
    if (epss !== 0) return epss;
    return a.vulnerabilityId < b.vulnerabilityId ? -1 : a.vulnerabilityId > b.vulnerabilityId ? 1 : 0;
  });
}

/** `CVE-1, CVE-2 and 3 more` */
export function listed(names: readonly string[]): string {
  const shown = names.slice(0, CITE_LIMIT);
  const more = names.length - shown.length;
  return more > 0 ? `${shown.join(', ')} and ${more} more` : shown.join(', ');
}

export const plural = (n: number, one: string, many: string): string => `${n} ${n === 1 ? one : many}`;

/** How the rules name an asset in a sentence. */
export const assetLabel = (subject: RiskSubject): string => subject.asset.name ?? subject.asset.id;

/** Factors of the asset's context: exposure (when counted), privileges, production. */
export function contextFactors(subject: RiskSubject, withExposure: boolean): CountedFactor[] {
  const { asset } = subject;
  const out: CountedFactor[] = [];
  if (withExposure && asset.isPubliclyExposed)
    out.push(factor('publicExposure', 3, `${assetLabel(subject)} is reachable from the internet.`));
  if (asset.hasAdminPrivileges)
    out.push(factor('adminPrivileges', 2.5, `${assetLabel(subject)} holds administrative privileges.`));
  else if (asset.hasOverlyPermissivePrivileges)
    out.push(factor('overlyPermissivePrivileges', 1.5, `${assetLabel(subject)} holds overly permissive privileges.`));
  if (asset.isProduction)
    out.push(factor('productionEnvironment', 1.5, `${assetLabel(subject)} is in a production environment.`));
  return out;
}

/** Factors of a set of cited findings: KEV, exploits, EPSS, CVSS exploitability, and the worst severity. */
export function findingFactors(cited: readonly SubjectFinding[]): CountedFactor[] {
  const ids = (keep: (f: SubjectFinding) => boolean) => cited.filter(keep).map((f) => f.vulnerabilityId);
  const out: CountedFactor[] = [];
  const kev = ids((f) => f.hasKev);
  if (kev.length > 0)
    out.push(
      factor('knownExploited', 4, `${listed(kev)} ${kev.length === 1 ? 'is' : 'are'} in the CISA KEV catalog.`, {
        vulnerabilityIds: kev.slice(0, CITE_LIMIT),
        count: kev.length,
      }),
    );
  const exploited = cited.filter((f) => f.hasExploit);
  if (exploited.length > 0)
    out.push(
      factor('publicExploit', 2, `A public exploit exists for ${listed(exploited.map((f) => f.vulnerabilityId))}.`, {
        vulnerabilityIds: exploited.slice(0, CITE_LIMIT).map((f) => f.vulnerabilityId),
        exploitIds: [...new Set(exploited.flatMap((f) => f.exploitIds))].slice(0, CITE_LIMIT),
        count: exploited.length,
      }),
    );
  const scored = cited.filter((f) => f.epss !== null);
  if (scored.length > 0) {
    const top = scored.reduce((a, b) => ((b.epss?.score ?? 0) > (a.epss?.score ?? 0) ? b : a));
    const epss = top.epss as NonNullable<SubjectFinding['epss']>;
    out.push(
      factor(
        'epss',
        3 * epss.score,
        `${top.vulnerabilityId} has an EPSS score of ${epss.score} (percentile ${epss.percentile}): the estimated probability of exploitation activity in the next 30 days.`,
        { vulnerabilityId: top.vulnerabilityId, cveId: epss.cveId, epss: epss.score, percentile: epss.percentile },
      ),
    );
  }
  const exploitable = ids((f) => f.isExploitable);
  if (exploitable.length > 0)
    out.push(
      factor(
        'cvssExploitability',
        3,
        `${listed(exploitable)} ${exploitable.length === 1 ? 'has' : 'have'} a CVSS v3 exploitability sub-score above 1.0.`,
        { vulnerabilityIds: exploitable.slice(0, CITE_LIMIT), count: exploitable.length },
      ),
    );
  const worst = cited[0];
  if (worst)
    out.push(
      factor(
        'vulnerabilitySeverity',
        SEVERITY_POINTS(worst.severity),
        `The worst cited finding, ${worst.vulnerabilityId}, is rated ${worst.severity}.`,
        { vulnerabilityId: worst.vulnerabilityId, severity: worst.severity },
      ),
    );
  return out;
}

export const secretFactors = (subject: RiskSubject): CountedFactor[] => {
  const secrets = subject.asset.secrets;
  const worst = secrets.reduce((a, b) => (SEVERITY_ORDER[b.severity] > SEVERITY_ORDER[a.severity] ? b : a));
  return [
    factor(
      'exposedSecret',
      5,
      `${plural(secrets.length, 'secret was', 'secrets were')} found on ${assetLabel(subject)}.`,
      { count: secrets.length },
    ),
    factor(
      'secretSeverity',
      SEVERITY_POINTS(worst.severity),
      `The worst secret, ${worst.title}, is rated ${worst.severity}.`,
      {
        severity: worst.severity,
        title: worst.title,
        target: worst.target,
      },
    ),
  ];
};

export const checkFactors = (check: RiskSubject['checks'][number]): CountedFactor[] => [
  factor('failedCheck', SEVERITY_POINTS(check.severity), `${check.source} reports the check ${check.checkId} failed.`, {
    checkId: check.checkId,
    source: check.source,
    severity: check.severity,
  }),
  factor('checkSeverity', SEVERITY_POINTS(check.severity), `The check is rated ${check.severity}.`, {
    severity: check.severity,
  }),
];

/** What to do about cited findings: upgrade each package that has a fix, mitigate those that have none, and apply
 * CISA's required action where the catalog gives one. */
export function findingResolutions(cited: readonly SubjectFinding[]): RiskResolution[] {
  const upgrades = new Map<string, { pkg: string; from: string | null; to: string; ids: string[] }>();
  const out: RiskResolution[] = [];
  const mitigations: RiskResolution[] = [];
  const actions: RiskResolution[] = [];
  for (const f of cited.slice(0, CITE_LIMIT)) {
    for (const p of f.packages) {
      const pkg = p.packageName ?? 'the affected package';
      if (p.fixedVersion) {
        const key = `upgrade:${pkg}@${p.installedVersion ?? ''}>${p.fixedVersion}`;
        const entry = upgrades.get(key) ?? { pkg, from: p.installedVersion, to: p.fixedVersion, ids: [] };
        if (!entry.ids.includes(f.vulnerabilityId)) entry.ids.push(f.vulnerabilityId);
        upgrades.set(key, entry);
      } else {
        mitigations.push({
          key: `mitigate:${f.vulnerabilityId}:${pkg}`,
          type: 'MITIGATE_VULNERABILITY',
          title: `No fixed version of ${pkg} is known for ${f.vulnerabilityId}: remove or isolate the package, or apply the vendor's mitigation.`,
        });
      }
    }
    if (f.knownExploit?.requiredAction)
      actions.push({
        key: `kev:${f.vulnerabilityId}`,
        type: 'APPLY_REQUIRED_ACTION',
        title: `CISA's required action for ${f.vulnerabilityId}${f.knownExploit.dueDate ? ` (due ${f.knownExploit.dueDate})` : ''}: ${f.knownExploit.requiredAction}`,
      });
  }
  for (const [key, u] of upgrades)
    out.push({
      key,
      type: 'UPGRADE_PACKAGE',
      title: `Upgrade ${u.pkg}${u.from ? ` from ${u.from}` : ''} to ${u.to} (fixes ${u.ids.join(', ')}).`,
    });
  return [...out, ...mitigations, ...actions];
}

export const exposureResolution = (subject: RiskSubject): RiskResolution => ({
  key: 'restrict-exposure',
  type: 'RESTRICT_EXPOSURE',
  title: `Remove the public exposure of ${assetLabel(subject)}, or put it behind an authenticating proxy or a network policy that admits only known sources.`,
});

export const privilegeResolution = (subject: RiskSubject): RiskResolution => ({
  key: 'reduce-privileges',
  type: 'REDUCE_PRIVILEGES',
  title: `Reduce the privileges of ${assetLabel(subject)} to the actions and resources it needs (least privilege).`,
});
