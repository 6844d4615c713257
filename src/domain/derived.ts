// The fields the service computes rather than imports, one function per rule. Import, storage and the generator call
// these; SQL that mirrors one of them says so and is tested against it (test/domain/derived.test.ts,
// test/storage/rules.test.ts). docs/DESIGN.md explains the choices.
import { severityLevelValues, type FindingSeverity } from './enums.js';

/** A finding's severityLevelValue: the rank of its severity (CRITICAL 5 … UNKNOWN 0). */
export const severityLevelValue = (severity: FindingSeverity): number => severityLevelValues[severity];

/** A finding's hasVendorFix: any of its packages names a non-empty fixed version. */
export const hasVendorFix = (packages: readonly { fixedVersion: string | null }[]): boolean =>
  packages.some((p) => typeof p.fixedVersion === 'string' && p.fixedVersion !== '');

/** An asset's numberOf…Secrets: the lengths of its secret arrays, whatever an import file says. */
export const secretCounts = (asset: {
  lowSecrets: readonly unknown[];
  mediumSecrets: readonly unknown[];
  highSecrets: readonly unknown[];
  criticalSecrets: readonly unknown[];
}) => ({
  numberOfLowSecrets: asset.lowSecrets.length,
  numberOfMediumSecrets: asset.mediumSecrets.length,
  numberOfHighSecrets: asset.highSecrets.length,
  numberOfCriticalSecrets: asset.criticalSecrets.length,
});

/**
 * vulnerabilityScore (0 to 10): 10 × (1 − e^(−w/20)) with w = 25·critical + 10·high + 3·medium + 1·low, rounded to two
 * decimals. It is 0 with no finding and grows with every counted finding and with severity, approaching 10 (reached
 * only through rounding, from w ≈ 150); one critical gives 7.13, one high 3.93, one medium 1.39, one low 0.49.
 * INFORMATIONAL and UNKNOWN findings do not count.
 */
export function vulnerabilityScore(counts: { critical: number; high: number; medium: number; low: number }): number {
  const weight = 25 * counts.critical + 10 * counts.high + 3 * counts.medium + counts.low;
  return Math.round(1000 * (1 - Math.exp(-weight / 20))) / 100;
}

/** What the asset fields are derived from: one finding of the asset that no exemption matches. */
export interface CountedFinding {
  severityLevelValue: number;
  hasKev: boolean;
  hasExploit: boolean;
  isExploitable: boolean;
}

export interface DerivedAssetFields {
  isVulnerable: boolean;
  numberOfLowVulnerabilities: number;
  numberOfMediumVulnerabilities: number;
  numberOfHighVulnerabilities: number;
  numberOfCriticalVulnerabilities: number;
  vulnerabilityScore: number;
  hasKev: boolean;
  hasExploit: boolean;
  isExploitable: boolean;
}

/**
 * The derived asset fields from the asset's counted (non-exempted) findings: any finding makes it vulnerable, even an
 * INFORMATIONAL or UNKNOWN one, which no count includes; the flags are true when any counted finding has them.
 */
export function deriveAssetFields(findings: Iterable<CountedFinding>): DerivedAssetFields {
  let any = false,
    low = 0,
    medium = 0,
    high = 0,
    critical = 0,
    kev = false,
    exploit = false,
    exploitable = false;
  for (const f of findings) {
    any = true;
    if (f.severityLevelValue === severityLevelValues.LOW) low += 1;
    else if (f.severityLevelValue === severityLevelValues.MEDIUM) medium += 1;
    else if (f.severityLevelValue === severityLevelValues.HIGH) high += 1;
    else if (f.severityLevelValue === severityLevelValues.CRITICAL) critical += 1;
    kev ||= f.hasKev;
    exploit ||= f.hasExploit;
    exploitable ||= f.isExploitable;
  }
  return {
    isVulnerable: any,
    numberOfLowVulnerabilities: low,
    numberOfMediumVulnerabilities: medium,
    numberOfHighVulnerabilities: high,
    numberOfCriticalVulnerabilities: critical,
    vulnerabilityScore: vulnerabilityScore({ critical, high, medium, low }),
    hasKev: kev,
    hasExploit: exploit,
    isExploitable: exploitable,
  };
}
