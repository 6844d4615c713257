// Exemption matching: which exemptions match a finding (docs/DESIGN.md, "Exemptions"). Pure: the derived-field
// computation at import runs it for every finding of the assets an import may have changed.
import { parseTimestamp } from './time.js';
import type { Exemption, ExemptionRule } from './vulnerabilities.js';

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
  /** When it stops applying, in epoch milliseconds; null: never. */
  expiresAt: number | null;
}

/**
 * Whether an exemption applies at `now` (epoch milliseconds): one without `expiresAt` always, one whose `expiresAt` is
 * at or before `now` no longer (pipeline.md §6). Text that is not a timestamp never reaches here: the import refuses it.
 */
export const inForce = (expiresAt: number | null, now: number): boolean => expiresAt === null || expiresAt > now;

export const compileExemption = (exemptionId: string, exemption: Exemption): CompiledExemption => ({
  exemptionId,
  rules: exemption.rules.map(compileRule).filter((criteria) => criteria.length > 0),
  expiresAt: exemption.expiresAt == null ? null : parseTimestamp(exemption.expiresAt),
});

/**
 * Ids of the exemptions that match the finding at `now`: those in force with at least one rule whose every set
 * criterion holds.
 */
export function matchingExemptions(
  exemptions: readonly CompiledExemption[],
  finding: MatchableFinding,
  asset: MatchableAsset,
  now: number,
): string[] {
  const ids: string[] = [];
  for (const exemption of exemptions) {
    if (!inForce(exemption.expiresAt, now)) continue;
    if (exemption.rules.some((criteria) => criteria.every((holds) => holds(finding, asset))))
      ids.push(exemption.exemptionId);
  }
  return ids;
}
