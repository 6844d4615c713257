// Risks: each names a primary asset by recomputing it (or a ghost asset that is not in the inventory).
import { FACTOR_TITLES, RISK_TYPES, SECRET_TYPES } from './catalog.js';
import {
  chance,
  createRng,
  float,
  hex,
  int,
  isoTime,
  pick,
  round,
  uuid,
  weighted,
  weightedPicker,
  type Rng,
} from './random.js';
import { DAY, HOUR, type Settings } from './settings.js';
import { type Tenant } from './tenants.js';
import { type AssetCore, assetCore } from './identity.js';

const pickRiskSeverity = weightedPicker([
  ['CRITICAL', 8],
  ['HIGH', 25],
  ['MEDIUM', 45],
  ['LOW', 22],
] as const);
const SCORE_RANGE: Readonly<Record<'CRITICAL' | 'HIGH' | 'MEDIUM' | 'LOW', readonly [number, number]>> = {
  CRITICAL: [9, 10],
  HIGH: [7, 8.9],
  MEDIUM: [4, 6.9],
  LOW: [0.5, 3.9],
};

export function buildRisk(s: Settings, tenant: Tenant, index: number): Record<string, unknown> {
  const rng = createRng(s.seed, 'risk', tenant.index, index);
  // About 5% of risks point at an asset that is not (or no longer) in the inventory.
  const known = s.assets > 0 && !chance(rng, 0.05);
  const core = known ? assetCore(s, tenant, int(rng, 0, s.assets - 1)) : assetCore(s, tenant, 0, index);
  const types = RISK_TYPES.filter((t) => t.categories.includes(core.kind.category));
  const type = types.length > 0 ? pick(rng, types) : pick(rng, RISK_TYPES);
  const severityLevel = pickRiskSeverity(rng);
  const [low, high] = SCORE_RANGE[severityLevel];
  const score = round(float(rng, low, high), 1);
  const near = (v: number): number => round(Math.min(10, Math.max(0, v + float(rng, -1.5, 1.5))), 1);
  return {
    id: uuid(rng),
    riskTypeId: type.id,
    organizationId: tenant.organizationId,
    tenantId: tenant.tenantId,
    integrationId: core.integrationId,
    description: `${type.title}: ${core.name} (${core.type}) in ${core.region}.`,
    primaryAssetId: core.id,
    region: core.region,
    resolutions: type.resolutions.map(([key, title], i) => ({
      key,
      type: i === 0 ? 'REMEDIATION' : 'MITIGATION',
      title,
    })),
    score,
    likelihood: near(score),
    impact: near(score),
    severityLevel,
    factors: type.factors.slice(0, int(rng, 1, type.factors.length)).map((key) => ({
      key,
      meta: factorMeta(rng, key, core),
      title: FACTOR_TITLES[key] ?? key,
      value: round(float(rng, 0.2, 1), 2),
      verificationState: weighted(rng, [
        ['VERIFIED', 60],
        ['UNVERIFIED', 25],
        ['INFERRED', 15],
      ] as const),
      description: `${FACTOR_TITLES[key] ?? key} on ${core.name}.`,
    })),
    meta: { assetName: core.name, resourceType: core.type, fullResourceName: core.fullResourceName },
    discoveredAt: isoTime(s.now - int(rng, HOUR, 700 * DAY)),
    lifecycleState: weighted(rng, [
      ['OPEN', 85],
      ['DISMISSED_ACCEPTED', 10],
      ['DISMISSED_NOT_A_RISK', 5],
    ] as const),
  };
}

function factorMeta(rng: Rng, key: string, core: AssetCore): Record<string, unknown> {
  switch (key) {
    case 'internet-exposure':
    case 'management-port':
      return {
        ports: key === 'management-port' ? [pick(rng, [22, 3389] as const)] : [443],
        sourceCidr: '0.0.0.0/0',
        path: [`igw-0${hex(rng, 8)}`, `sg-0${hex(rng, 8)}`],
      };
    case 'critical-vulnerability':
    case 'known-exploit':
      return { count: int(rng, 1, 12), cvssMax: round(float(rng, 9, 10), 1) };
    case 'admin-privileges':
    case 'unused-permissions':
      return { policies: ['AdministratorAccess'], unusedDays: int(rng, 30, 400) };
    case 'sensitive-data':
      return { classification: pick(rng, ['PII', 'PCI', 'credentials'] as const), objectsSampled: int(rng, 10, 500) };
    case 'plaintext-secret':
      return { secretType: pick(rng, SECRET_TYPES)[0], locations: int(rng, 1, 4) };
    default:
      return { assetId: core.id, observed: true };
  }
}
