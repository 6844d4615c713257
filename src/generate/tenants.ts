// Tenants, their environments and integrations: the owners every generated record points back to.
import {
  APPS,
  ASSET_KINDS,
  PROVIDERS,
  PROVIDER_WEIGHTS,
  REGIONS,
  TENANT_NAMES,
  type AssetKind,
  type Provider,
} from './catalog.js';
import {
  at,
  chance,
  createRng,
  dateBetween,
  float,
  int,
  isoTime,
  pick,
  round,
  sample,
  shuffle,
  uuid,
  weighted,
  weightedPicker,
  type Rng,
} from './random.js';
import { DAY, HISTORY, MINUTE, type Settings } from './settings.js';

export interface Environment {
  environmentId: string;
  name: string;
  isProduction: boolean;
  /** Value of the Environment tag on assets scanned through it. */
  tag: string;
}

export interface Integration {
  integrationId: string;
  provider: Provider;
  environment: Environment | null;
  /** Account, subscription or project number; an asset's providerAccountId. */
  accountNumber: number;
  awsAccountId: string | null;
  azureSubscriptionId: string | null;
  gcpProjectId: string | null;
  /** For a Kubernetes integration: the cluster it watches. */
  cluster: { name: string; region: string } | null;
  /** Regions its assets live in. */
  regions: readonly string[];
  /** Millisecond start times of its recent scans, newest first; they double as execution ids. */
  executions: readonly number[];
  record: Record<string, unknown>;
}

export interface Tenant {
  index: number;
  tenantId: string;
  organizationId: string;
  name: string;
  /** Short lower-case name used inside resource names. */
  slug: string;
  environments: readonly Environment[];
  integrations: readonly Integration[];
  byProvider: Readonly<Record<Provider, readonly Integration[]>>;
  pickKind: (rng: Rng) => AssetKind;
  /** Mean findingsWeight of the tenant's asset mix: dividing by it keeps the average findings per asset as asked. */
  meanFindingsWeight: number;
}

const ENVIRONMENT_SETS: readonly (readonly [string, boolean, string][])[] = [
  [
    ['production', true, 'prod'],
    ['staging', false, 'staging'],
    ['development', false, 'dev'],
  ],
  [
    ['production', true, 'prod'],
    ['staging', false, 'staging'],
    ['dev', false, 'dev'],
    ['sandbox', false, 'sandbox'],
  ],
  [
    ['production', true, 'prod'],
    ['production-eu', true, 'prod'],
    ['staging', false, 'staging'],
    ['dev', false, 'dev'],
  ],
  [
    ['prod', true, 'prod'],
    ['qa', false, 'qa'],
    ['dev', false, 'dev'],
  ],
];

const INTEGRATION_TYPES: Readonly<Record<Provider, string>> = {
  AWS: 'AWS_ACCOUNT',
  Azure: 'AZURE_SUBSCRIPTION',
  GCP: 'GCP_PROJECT',
  Kubernetes: 'KUBERNETES_CLUSTER',
};

const SCHEDULES: readonly (readonly [string, number])[] = [
  ['0 */6 * * *', 21600],
  ['0 */12 * * *', 43200],
  ['0 2 * * *', 86400],
];

export function buildTenant(s: Settings, index: number): Tenant {
  const rng = createRng(s.seed, 'tenant', index);
  const tenantId = uuid(rng);
  const organizationId = uuid(rng);
  // One offset per seed (not per tenant) keeps names distinct; past the list they repeat with a number.
  const offset = int(createRng(s.seed, 'tenant-names'), 0, TENANT_NAMES.length - 1);
  const baseName = at(TENANT_NAMES, (index + offset) % TENANT_NAMES.length);
  const name = index < TENANT_NAMES.length ? baseName : `${baseName} ${Math.floor(index / TENANT_NAMES.length) + 1}`;
  const slug = (baseName.split(' ')[0] ?? 'acme').toLowerCase();

  const environments = pick(rng, ENVIRONMENT_SETS).map(([envName, isProduction, tag]) => ({
    environmentId: uuid(rng),
    name: envName,
    isProduction,
    tag,
  }));

  // Every tenant has an AWS account; the first tenant covers all providers so a demo shows each of them.
  const count =
    index === 0
      ? int(rng, 4, 6)
      : weighted(rng, [
          [2, 10],
          [3, 15],
          [4, 35],
          [5, 25],
          [6, 15],
        ] as const);
  const others = shuffle(
    rng,
    PROVIDERS.filter((p) => p !== 'AWS'),
  );
  const providers: Provider[] = ['AWS', ...others];
  while (providers.length < count) providers.push(pick(rng, ['AWS', 'AWS', 'Kubernetes', 'Azure', 'GCP'] as const));
  providers.length = count;
  // One integration in a few tenants was never assigned an environment.
  const unassigned = chance(rng, 0.35) ? int(rng, 0, count - 1) : -1;
  const integrations = providers.map((provider, i) =>
    buildIntegration(
      s,
      rng,
      { tenantId, organizationId, slug },
      provider,
      i,
      i === unassigned ? null : (environments[i % environments.length] ?? null),
    ),
  );

  const byProvider = { AWS: [], Azure: [], GCP: [], Kubernetes: [] } as Record<Provider, Integration[]>;
  for (const integration of integrations) byProvider[integration.provider].push(integration);
  const kinds = ASSET_KINDS.filter((k) => byProvider[k.provider].length > 0);
  const providerTotals = new Map<Provider, number>();
  for (const k of kinds) providerTotals.set(k.provider, (providerTotals.get(k.provider) ?? 0) + k.weight);
  const entries = kinds.map(
    (k) => [k, (PROVIDER_WEIGHTS[k.provider] * k.weight) / (providerTotals.get(k.provider) ?? 1)] as const,
  );
  const total = entries.reduce((sum, [, w]) => sum + w, 0);
  const meanFindingsWeight = entries.reduce((sum, [k, w]) => sum + k.findingsWeight * w, 0) / total;

  return {
    index,
    tenantId,
    organizationId,
    name,
    slug,
    environments,
    integrations,
    byProvider,
    pickKind: weightedPicker(entries),
    meanFindingsWeight,
  };
}

/** The managed Kubernetes offering of the cloud a cluster region belongs to. */
export const clusterFlavour = (region: string): string =>
  REGIONS.Azure.includes(region) ? 'aks' : REGIONS.GCP.includes(region) ? 'gke' : 'eks';

function buildIntegration(
  s: Settings,
  rng: Rng,
  owner: { tenantId: string; organizationId: string; slug: string },
  provider: Provider,
  ordinal: number,
  environment: Environment | null,
): Integration {
  const integrationId = uuid(rng);
  const envTag = environment?.tag ?? 'shared';
  const accountNumber = int(rng, 100_000_000_000, 999_999_999_999);
  const awsAccountId = provider === 'AWS' ? String(accountNumber) : null;
  const azureSubscriptionId = provider === 'Azure' ? uuid(rng) : null;
  const azureDirectoryId = provider === 'Azure' ? uuid(rng) : null;
  const gcpProjectId = provider === 'GCP' ? `${owner.slug}-${pick(rng, APPS)}-${envTag}-${int(rng, 1000, 9999)}` : null;
  const allRegions = REGIONS[provider];
  const home = pick(rng, allRegions);
  const clusterRegion = pick(rng, REGIONS.Kubernetes);
  const cluster =
    provider === 'Kubernetes'
      ? {
          name: `${envTag}-${clusterFlavour(clusterRegion)}-${clusterRegion.replace(/[^a-z0-9]/g, '').slice(0, 8)}-${ordinal}`,
          region: clusterRegion,
        }
      : null;
  const regions =
    provider === 'Kubernetes'
      ? [clusterRegion]
      : [
          home,
          ...sample(
            rng,
            allRegions.filter((r) => r !== home),
            int(rng, 0, 2),
          ),
        ];
  const [schedule, scanInterval] = pick(rng, SCHEDULES);
  // A few scans within the last days: the execution id of a scan is its start time in epoch milliseconds.
  const lastScan = s.now - int(rng, 10 * MINUTE, scanInterval * 1000);
  const executions = Array.from(
    { length: int(rng, 3, 5) },
    (_, i) => lastScan - i * scanInterval * 1000 - int(rng, 0, 5 * MINUTE),
  );
  const createdAt = s.now - int(rng, 200 * DAY, HISTORY);
  const name = {
    AWS: `AWS ${envTag} (${awsAccountId ?? ''})`,
    Azure: `Azure ${owner.slug}-${envTag}`,
    GCP: `GCP ${gcpProjectId ?? ''}`,
    Kubernetes: `Kubernetes ${cluster?.name ?? ''}`,
  }[provider];
  const record = {
    integrationId,
    name,
    tenantId: owner.tenantId,
    organizationId: owner.organizationId,
    schedule,
    scanInterval,
    createdAt: isoTime(createdAt),
    updatedAt: isoTime(dateBetween(rng, createdAt, s.now - DAY)),
    provider,
    type: INTEGRATION_TYPES[provider],
    detectionSettingId: uuid(rng),
    status: weighted(rng, [
      ['CONNECTED', 85],
      ['DEGRADED', 10],
      ['ERROR', 5],
    ] as const),
    riskScore: round(float(rng, 1, 9), 1),
    awsAccountId,
    azureSubscriptionId,
    azureDirectoryId,
    gcpProjectId,
    environmentId: environment?.environmentId ?? null,
  };
  return {
    integrationId,
    provider,
    environment,
    accountNumber,
    awsAccountId,
    azureSubscriptionId,
    gcpProjectId,
    cluster,
    regions,
    executions,
    record,
  };
}
