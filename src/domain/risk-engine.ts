// The risk engine's arithmetic, with no rule in it: what a rule sees of an asset (a RiskSubject), the factors a rule
// may count (each with one weight, on one side: likelihood or impact), and how counted factors become a risk's
// likelihood, impact, score and severity (docs/RISKS.md). The rules themselves are src/domain/risk-rules.ts.
import { parse as parseUuid, v5 as uuidv5 } from 'uuid';
import type { FailedCheck } from './checks.js';
import type { FindingSeverity, LifecycleState, RiskSeverity } from './enums.js';
import type { Risk } from './risks.js';

/** A finding as the rules see it: only findings no exemption matches, and only those a rule can cite. */
export interface SubjectFinding {
  vulnerabilityId: string;
  title: string | null;
  severity: FindingSeverity;
  hasKev: boolean;
  hasExploit: boolean;
  isExploitable: boolean;
  /** The highest FIRST EPSS score of the finding's id and aliases, when the feed is loaded and lists one. */
  epss: { score: number; percentile: number; cveId: string } | null;
  /** The catalog entry's dates and action, when the finding is in CISA KEV. */
  knownExploit: { dateAdded: string | null; dueDate: string | null; requiredAction: string | null } | null;
  /** Exploit-DB ids (or another source's), in the finding's order. */
  exploitIds: string[];
  packages: { packageName: string | null; installedVersion: string | null; fixedVersion: string | null }[];
}

export interface SubjectSecret {
  severity: 'CRITICAL' | 'HIGH' | 'MEDIUM' | 'LOW';
  /** What the secret is (the scanner's title, rule or category). */
  title: string;
  /** Where it was found (a file, an image layer), when the scanner says. */
  target: string | null;
}

/** Everything the rules may look at for one asset. */
export interface RiskSubject {
  tenantId: string;
  organizationId: string;
  asset: {
    id: string;
    name: string | null;
    resourceType: string | null;
    region: string | null;
    integrationId: string | null;
    isPubliclyExposed: boolean;
    hasAdminPrivileges: boolean;
    hasOverlyPermissivePrivileges: boolean;
    /** The asset's integration is in a production environment. */
    isProduction: boolean;
    secrets: SubjectSecret[];
  };
  /** Findings that are not exempted and are known-exploited or exploitable (the only ones a rule cites). */
  findings: SubjectFinding[];
  checks: FailedCheck[];
}

/**
 * Which findings a rule can cite on an asset: known-exploited ones always; exploitable ones only when the asset is
 * publicly exposed or privileged (the only rules that cite them need one of those). Storage pre-selects findings by
 * this test in SQL; test/domain/risk-rules.test.ts shows that findings it leaves out change no risk.
 */
export const citesExploitable = (
  asset: Pick<RiskSubject['asset'], 'isPubliclyExposed' | 'hasAdminPrivileges' | 'hasOverlyPermissivePrivileges'>,
): boolean => asset.isPubliclyExposed || asset.hasAdminPrivileges || asset.hasOverlyPermissivePrivileges;

export const isCitable = (
  f: Pick<SubjectFinding, 'hasKev' | 'isExploitable'>,
  asset: Parameters<typeof citesExploitable>[0],
): boolean => f.hasKev || (f.isExploitable && citesExploitable(asset));

/** Provenance of a factor: VERIFIED when a scanner or a public catalog reports it, UNVERIFIED for a model's estimate
 * or an attribute of the inventory that nothing checked. */
export type VerificationState = 'VERIFIED' | 'UNVERIFIED';

export interface FactorDefinition {
  key: string;
  title: string;
  side: 'likelihood' | 'impact';
  verificationState: VerificationState;
  /** How many points it adds, in words, for the catalog (docs/RISKS.md). */
  weight: string;
}

/** One counted factor: its points (`value`), why (`description`) and the evidence (`meta`). */
export interface CountedFactor {
  key: string;
  points: number;
  description: string;
  meta: Record<string, unknown>;
}

export interface RiskResolution {
  key: string;
  type:
    | 'UPGRADE_PACKAGE'
    | 'MITIGATE_VULNERABILITY'
    | 'APPLY_REQUIRED_ACTION'
    | 'RESTRICT_EXPOSURE'
    | 'REDUCE_PRIVILEGES'
    | 'ROTATE_SECRET'
    | 'REMEDIATE_CHECK';
  title: string;
}

/** What a rule makes of a subject: one risk, before scoring and before storage gives it a date and a state. */
export interface RuleOutcome {
  riskTypeId: string;
  description: string;
  factors: CountedFactor[];
  resolutions: RiskResolution[];
}

/** Points of a severity on a side, from a table with a value per level (unlisted levels score `otherwise`). */
export const severityPoints =
  (table: Partial<Record<FindingSeverity, number>>, otherwise: number) =>
  (severity: FindingSeverity): number =>
    table[severity] ?? otherwise;

/** Tenths, rounded half up, without the float error of `Math.round(x * 10) / 10` (7.25 stays 7.3). */
export const toTenths = (value: number): number => Math.round(Number((value * 10).toPrecision(12)));

/**
 * Likelihood or impact: the sum of a side's factor values (each already to one decimal, as `factors[].value` shows
 * it), capped at 10, so a reader can add the values up and get the same number.
 */
export const sideTotal = (points: readonly number[]): number =>
  Math.min(
    100,
    points.reduce((sum, p) => sum + toTenths(p), 0),
  ) / 10;

/** score = likelihood × impact / 10, to one decimal (half up), from the one-decimal likelihood and impact. */
export const riskScore = (likelihood: number, impact: number): number =>
  Math.round((Math.round(likelihood * 10) * Math.round(impact * 10)) / 100) / 10;

/** The CVSS bands: CRITICAL ≥ 9.0, HIGH ≥ 7.0, MEDIUM ≥ 4.0, LOW below. */
export const severityOfScore = (score: number): RiskSeverity =>
  score >= 9 ? 'CRITICAL' : score >= 7 ? 'HIGH' : score >= 4 ? 'MEDIUM' : 'LOW';

/** A fixed namespace: derived risk ids are UUIDv5 of (tenant, risk type, asset), the same on every run. */
const RISK_NAMESPACE = parseUuid('b0b3c4f6-6f39-5d55-9e0c-5c1f2a8e4d11');
const utf8 = new TextEncoder();

// The namespace as bytes and the name as UTF-8 bytes, which is what `uuid` makes of the two strings on every call (it
// parses the namespace twice and encodes the name through `encodeURIComponent`): 24 µs an id, ~1 s of a feed load.
export const derivedRiskId = (tenantId: string, riskTypeId: string, assetId: string): string =>
  uuidv5(utf8.encode(`${tenantId}\u0000${riskTypeId}\u0000${assetId}`), RISK_NAMESPACE);

/** A risk as the API serves it, without the two fields storage owns (when first derived, and the user's state). */
export type DerivedRisk = Omit<Risk, 'discoveredAt' | 'lifecycleState'>;

/** Scores an outcome: every counted factor in `factors`, in the order the rule counted them. */
export function scoreOutcome(
  subject: RiskSubject,
  outcome: RuleOutcome,
  definitions: Readonly<Record<string, FactorDefinition>>,
): DerivedRisk {
  const side = (s: FactorDefinition['side']) =>
    outcome.factors.filter((f) => definitions[f.key]?.side === s).map((f) => f.points);
  const likelihood = sideTotal(side('likelihood'));
  const impact = sideTotal(side('impact'));
  const score = riskScore(likelihood, impact);
  const { asset } = subject;
  // Likelihood factors first, then impact, each side in the catalog's order: every risk reads the same way.
  const order = Object.keys(definitions);
  const rank = (key: string) => {
    const d = definitions[key];
    return (d?.side === 'impact' ? order.length : 0) + order.indexOf(key);
  };
  const factors = [...outcome.factors].sort((a, b) => rank(a.key) - rank(b.key));
  return {
    id: derivedRiskId(subject.tenantId, outcome.riskTypeId, asset.id),
    riskTypeId: outcome.riskTypeId,
    organizationId: subject.organizationId,
    tenantId: subject.tenantId,
    integrationId: asset.integrationId,
    description: outcome.description,
    primaryAssetId: asset.id,
    region: asset.region,
    resolutions: outcome.resolutions.map((r) => ({ key: r.key, type: r.type, title: r.title })),
    score,
    likelihood,
    impact,
    severityLevel: severityOfScore(score),
    factors: factors.map((f) => {
      const d = definitions[f.key];
      return {
        key: f.key,
        meta: { side: d?.side ?? null, ...f.meta },
        title: d?.title ?? f.key,
        value: toTenths(f.points) / 10,
        verificationState: d?.verificationState ?? null,
        description: f.description,
      };
    }),
    meta: { assetName: asset.name, resourceType: asset.resourceType, fullResourceName: asset.id },
  };
}

/** The stored risk: the derived one with its first derivation time and lifecycle state, in the API's field order. */
export const riskRecord = (risk: DerivedRisk, discoveredAt: string, lifecycleState: LifecycleState): Risk => ({
  ...risk,
  discoveredAt,
  lifecycleState,
});
