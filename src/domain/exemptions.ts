// Exemption matching (decisions §7, "List vulnerabilities"). Pure: used by the derived-field computation at import.
import type { Exemption, ExemptionRule } from '../modules/vulnerabilities/schemas.js';

export interface MatchableFinding {
  assetId: string;
  vulnerabilityId: string;
  hasVendorFix: boolean;
}

export interface MatchableAsset {
  region: string | null;
  tags: readonly { Key: string | null; Value: string | null }[];
  groupIds: ReadonlySet<string>;
}

type Criterion = (finding: MatchableFinding, asset: MatchableAsset) => boolean;

const setOf = (list: readonly string[] | null | undefined): Set<string> | null =>
  list && list.length > 0 ? new Set(list) : null;

/**
 * Compiles a rule to the list of criteria it sets. A criterion that is null, absent, an empty list or an empty string is
 * not set, nor is `noVendorFix: false`; a rule that sets none matches nothing. `exemptionType` never affects matching.
 */
export function compileRule(rule: ExemptionRule): Criterion[] {
  const criteria: Criterion[] = [];
  if (rule.vulnerabilityId) {
    const id = rule.vulnerabilityId;
    criteria.push((f) => f.vulnerabilityId === id);
  }
  const vulnerabilityIds = setOf(rule.vulnerabilityIds);
  if (vulnerabilityIds) criteria.push((f) => vulnerabilityIds.has(f.vulnerabilityId));
  const assetIds = setOf(rule.assetIds);
  if (assetIds) criteria.push((f) => assetIds.has(f.assetId));
  const groups = setOf(rule.assetGroupIds);
  if (groups) criteria.push((_f, a) => [...a.groupIds].some((g) => groups.has(g)));
  const regions = setOf(rule.assetRegions);
  if (regions) criteria.push((_f, a) => a.region !== null && regions.has(a.region));
  const tags = rule.assetTags && rule.assetTags.length > 0 ? rule.assetTags : null;
  if (tags) criteria.push((_f, a) => tags.some((t) => a.tags.some((at) => at.Key === t.key && at.Value === t.value)));
  if (rule.noVendorFix) criteria.push((f) => !f.hasVendorFix);
  return criteria;
}

export interface CompiledExemption {
  exemptionId: string;
  rules: Criterion[][];
}

export const compileExemption = (exemptionId: string, exemption: Exemption): CompiledExemption => ({
  exemptionId,
  rules: exemption.rules.map(compileRule).filter((criteria) => criteria.length > 0),
});

/** Ids of the exemptions that match the finding: those with at least one rule whose every set criterion holds. */
export function matchingExemptions(exemptions: readonly CompiledExemption[], finding: MatchableFinding, asset: MatchableAsset): string[] {
  const ids: string[] = [];
  for (const exemption of exemptions) {
    if (exemption.rules.some((criteria) => criteria.every((holds) => holds(finding, asset)))) ids.push(exemption.exemptionId);
  }
  return ids;
}

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
