// Asset groups and exemptions: they point at assets by recomputing them, never by remembering them.
import { APPS, REGIONS } from './catalog.js';
import { at, createRng, dateBetween, int, isoTime, pick, shuffle, uuid, type Rng } from './random.js';
import { DAY, HOUR, MAX_GROUP_MEMBERS, type Settings } from './settings.js';
import { type Tenant } from './tenants.js';
import { type AssetCore, assetCore } from './identity.js';
import { type BuiltAsset, COMPUTE, DECOMMISSION_TAG, buildAsset } from './assets.js';
import { type Pools, findingsOf } from './findings.js';

export interface Group {
  assetGroupId: string;
  name: string;
  /** Indexes of member assets (at most MAX_GROUP_MEMBERS). */
  members: readonly number[];
}

const PCI_APPS: ReadonlySet<string> = new Set(['payments', 'checkout', 'billing', 'ledger', 'fraud']);
const capitalize = (word: string): string => word.charAt(0).toUpperCase() + word.slice(1);

export function buildGroups(s: Settings, tenant: Tenant): Group[] {
  const rng = createRng(s.seed, 'groups', tenant.index);
  const probe = s.assets > 0 ? assetCore(s, tenant, int(rng, 0, s.assets - 1)) : null;
  const app = probe?.app ?? pick(rng, APPS);
  const region = probe?.region ?? at(REGIONS.AWS, 0);
  const templates: { name: string; test: (c: AssetCore) => boolean }[] = [
    { name: `${capitalize(app)} services`, test: (c) => c.app === app },
    { name: 'PCI scope', test: (c) => PCI_APPS.has(c.app) },
    { name: `Region ${region}`, test: (c) => c.region === region },
    { name: 'Data stores', test: (c) => c.kind.category === 'bucket' || c.kind.category === 'database' },
    { name: 'Production compute', test: (c) => c.envTag === 'prod' && COMPUTE.has(c.kind.category) },
  ];
  if (tenant.byProvider.Kubernetes.length > 0) {
    templates.push({
      name: 'Kubernetes workloads',
      test: (c) => c.kind.provider === 'Kubernetes' && COMPUTE.has(c.kind.category),
    });
  }
  return shuffle(rng, templates)
    .slice(0, int(rng, 3, 5))
    .map((template) => {
      const assetGroupId = uuid(rng);
      // Scan a bounded, evenly spread sample of the assets, so a group costs the same for any inventory size.
      const stride = Math.max(1, Math.floor(s.assets / 4000));
      const members: number[] = [];
      for (let i = int(rng, 0, stride - 1); i < s.assets && members.length < MAX_GROUP_MEMBERS; i += stride) {
        if (template.test(assetCore(s, tenant, i))) members.push(i);
      }
      return { assetGroupId, name: template.name, members };
    });
}

/** An asset that has findings, with the ids of those findings, found by recomputing assets from a start index. */
interface Probe {
  asset: BuiltAsset;
  vulnerabilityIds: readonly string[];
}

function findProbe(s: Settings, pools: Pools, tenant: Tenant, candidates: readonly number[]): Probe | null {
  for (const index of candidates.slice(0, 300)) {
    const asset = buildAsset(s, tenant, assetCore(s, tenant, index));
    const findings = findingsOf(s, pools, tenant, asset);
    if (findings.length > 0) return { asset, vulnerabilityIds: findings.map((f) => f.vulnerabilityId as string) };
  }
  return null;
}

const indexesFrom = (start: number, total: number): number[] =>
  Array.from({ length: Math.min(total, 300) }, (_, i) => (start + i * 7) % Math.max(1, total));

/**
 * A region that holds some of the tenant's assets but few of them (judged on a bounded sample), so that a rule on it
 * matches a small share of the findings.
 */
function uncommonRegion(s: Settings, tenant: Tenant, rng: Rng): string | null {
  const sampleSize = Math.min(s.assets, 400);
  if (sampleSize === 0) return null;
  const stride = Math.max(1, Math.floor(s.assets / sampleSize));
  const counts = new Map<string, number>();
  for (let i = int(rng, 0, stride - 1); i < s.assets; i += stride) {
    const region = assetCore(s, tenant, i).region;
    counts.set(region, (counts.get(region) ?? 0) + 1);
  }
  const seen = [...counts]
    .filter(([, n]) => n >= Math.max(2, sampleSize * 0.02))
    .sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : 1));
  return seen[0]?.[0] ?? null;
}

interface RuleCriteria {
  exemptionType: string;
  vulnerabilityId?: string;
  vulnerabilityIds?: string[];
  assetIds?: string[];
  assetGroupIds?: string[];
  assetRegions?: string[];
  assetTags?: { key: string; value: string }[];
  noVendorFix?: boolean;
}

/** A rule with every field present, unset criteria null (the shape the API returns). */
const rule = (c: RuleCriteria): Record<string, unknown> => ({
  exemptionType: c.exemptionType,
  vulnerabilityId: c.vulnerabilityId ?? null,
  vulnerabilityIds: c.vulnerabilityIds ?? null,
  assetIds: c.assetIds ?? null,
  assetGroupIds: c.assetGroupIds ?? null,
  assetRegions: c.assetRegions ?? null,
  assetTags: c.assetTags ?? null,
  noVendorFix: c.noVendorFix ?? false,
});

/**
 * Exemptions that between them use every rule criterion, and point at advisories, assets, regions, groups and tags that
 * occur in the tenant, while matching only a small share of its findings (single advisories, a few assets, a rare tag,
 * one region combined with noVendorFix).
 */
export function buildExemptions(
  s: Settings,
  pools: Pools,
  tenant: Tenant,
  groups: readonly Group[],
): Record<string, unknown>[] {
  const rng = createRng(s.seed, 'exemptions', tenant.index);
  const probes = [0, 1, 2, 3].map(() =>
    findProbe(s, pools, tenant, indexesFrom(int(rng, 0, Math.max(0, s.assets - 1)), s.assets)),
  );
  const fallback = (): string => pick(rng, pools.deb).vulnerabilityId;
  const vulnOf = (probe: Probe | null, n: number): string =>
    probe ? at(probe.vulnerabilityIds, n % probe.vulnerabilityIds.length) : fallback();
  const assetIdsOf = (...list: (Probe | null)[]): string[] => list.flatMap((p) => (p ? [p.asset.core.id] : []));
  const [p0 = null, p1 = null, p2 = null, p3 = null] = probes;

  const group = groups.find((g) => g.members.length > 0) ?? groups[0];
  const groupProbe = group ? findProbe(s, pools, tenant, group.members) : null;
  const region = uncommonRegion(s, tenant, rng) ?? p2?.asset.core.region ?? at(REGIONS.AWS, 0);
  const otherRegion = p3?.asset.core.region ?? region;

  const definitions: { name: string; reason: string; rules: Record<string, unknown>[] }[] = [
    {
      name: 'Base image CVEs awaiting upstream rebuild',
      reason: 'ACCEPTED_RISK',
      rules: [
        rule({ exemptionType: 'ACCEPTED_RISK', vulnerabilityId: vulnOf(p0, 0) }),
        rule({
          exemptionType: 'ACCEPTED_RISK',
          vulnerabilityIds: [...new Set([vulnOf(p1, 0), vulnOf(p1, 1), vulnOf(p2, 1)])],
        }),
      ],
    },
    {
      name: 'Hosts being decommissioned',
      reason: 'COMPENSATING_CONTROL',
      rules: [
        rule({
          exemptionType: 'DECOMMISSIONING',
          assetTags: [{ key: DECOMMISSION_TAG.key, value: DECOMMISSION_TAG.value }],
        }),
        rule({ exemptionType: 'DECOMMISSIONING', assetIds: assetIdsOf(p1, p3) }),
      ],
    },
    {
      name: `No vendor fix available in ${region}`,
      reason: 'NO_FIX_AVAILABLE',
      rules: [
        rule({ exemptionType: 'NO_FIX_AVAILABLE', assetRegions: [region], noVendorFix: true }),
        rule({
          exemptionType: 'FALSE_POSITIVE',
          assetGroupIds: group ? [group.assetGroupId] : [],
          vulnerabilityIds: [vulnOf(groupProbe, 0)],
        }),
      ],
    },
    {
      name: 'Temporary exception during platform migration',
      reason: 'TEMPORARY',
      rules: [rule({ exemptionType: 'TEMPORARY', assetIds: assetIdsOf(p2), vulnerabilityId: vulnOf(p2, 0) })],
    },
    {
      name: `Scanner false positives in ${otherRegion}`,
      reason: 'FALSE_POSITIVE',
      rules: [
        rule({
          exemptionType: 'FALSE_POSITIVE',
          assetRegions: [otherRegion],
          vulnerabilityIds: [vulnOf(p3, 0), vulnOf(p0, 1)],
        }),
      ],
    },
  ];
  return definitions.slice(0, int(rng, 3, 5)).map((d) => {
    const createdMs = s.now - int(rng, 2 * DAY, 180 * DAY);
    return {
      tenantId: tenant.tenantId,
      organizationId: tenant.organizationId,
      exemptionId: uuid(rng),
      exemption: {
        name: d.name,
        reason: d.reason,
        createdAt: isoTime(createdMs),
        updatedAt: isoTime(dateBetween(rng, createdMs, s.now - HOUR)),
        rules: d.rules,
      },
    };
  });
}
