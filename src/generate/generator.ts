// Deterministic, realistic inventory generator behind `secinv generate` and `secinv demo` (decisions §2, §9).
//
// Output is NDJSON import records, per tenant in dependency order: tenant, environments, integrations, assets (each
// followed by its findings), asset groups, exemptions, risks. Nothing is kept per asset: every asset is a pure
// function of (seed, tenant index, asset index), so later records (groups, exemptions, risks) recompute the assets
// they point at instead of remembering them. That keeps memory flat for any inventory size, and makes the same
// options produce byte-identical output (no Math.random, no clock: `now` is fixed unless given).
import { once } from 'node:events';
import {
  APPS, ASSET_KINDS, BUCKET_PURPOSES, COMPONENTS, CONTAINER_RELEASES, CWES, ECOSYSTEMS, EXPLOIT_SOURCES, FACTOR_TITLES,
  FAMOUS_CVES, LANGUAGE_TARGETS, OPERATIONAL_STATE_TYPE, PACKAGES, PROVIDERS, PROVIDER_WEIGHTS, REGIONS, RISK_TYPES,
  SCHEMA_VERSIONS, SECRET_TYPES, SEVERITY_SOURCES, TEAMS, TENANT_NAMES, VM_RELEASES, WEAKNESS_PHRASES,
  type AssetKind, type Category, type Ecosystem, type OsRelease, type PackageSpec, type Provider,
} from './catalog.js';
import {
  alnum, at, chance, createRng, dateBetween, float, hex, int, isoDate, isoTime, pick, round, sample, shuffle,
  stochasticRound, uuid, weighted, weightedPicker, type Rng,
} from './random.js';

export interface GenerateOptions {
  seed: string | number;
  /** Number of tenants. */
  tenants: number;
  /** Assets per tenant. */
  assets: number;
  /** Average vulnerability findings per asset (some assets have none, some up to about twice as many). */
  findingsPerAsset: number;
  /** Risks per tenant. */
  risks: number;
  /** The moment the inventory describes; every timestamp lies within about two years before it. */
  now?: Date;
}

/** The default `now`: fixed, so output never depends on when it was generated. */
export const DEFAULT_NOW = new Date('2026-11-01T00:00:00.000Z');

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const HISTORY = 730 * DAY;

/** Fixed first segment of every asset resource name. */
export const ASSET_ID_PREFIX = 'sirn';
/** The first assets of every tenant share their ids (with different contents), to exercise tenant isolation. */
export const SHARED_ASSET_IDS = 5;
const MAX_GROUP_MEMBERS = 200;

interface Settings {
  seed: string;
  tenants: number;
  assets: number;
  findingsPerAsset: number;
  risks: number;
  now: number;
}

function settingsOf(opts: GenerateOptions): Settings {
  const count = (name: string, value: number): number => {
    if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`${name} must be a non-negative integer, not ${value}`);
    return value;
  };
  if (!Number.isFinite(opts.findingsPerAsset) || opts.findingsPerAsset < 0) {
    throw new RangeError(`findingsPerAsset must be a non-negative number, not ${opts.findingsPerAsset}`);
  }
  const now = (opts.now ?? DEFAULT_NOW).getTime();
  if (!Number.isFinite(now)) throw new RangeError('now must be a valid date');
  return {
    seed: String(opts.seed),
    tenants: count('tenants', opts.tenants),
    assets: count('assets', opts.assets),
    findingsPerAsset: opts.findingsPerAsset,
    risks: count('risks', opts.risks),
    now,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Tenants, environments, integrations

interface Environment {
  environmentId: string;
  name: string;
  isProduction: boolean;
  /** Value of the Environment tag on assets scanned through it. */
  tag: string;
}

interface Integration {
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

interface Tenant {
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
  [['production', true, 'prod'], ['staging', false, 'staging'], ['development', false, 'dev']],
  [['production', true, 'prod'], ['staging', false, 'staging'], ['dev', false, 'dev'], ['sandbox', false, 'sandbox']],
  [['production', true, 'prod'], ['production-eu', true, 'prod'], ['staging', false, 'staging'], ['dev', false, 'dev']],
  [['prod', true, 'prod'], ['qa', false, 'qa'], ['dev', false, 'dev']],
];

const INTEGRATION_TYPES: Readonly<Record<Provider, string>> = {
  AWS: 'AWS_ACCOUNT', Azure: 'AZURE_SUBSCRIPTION', GCP: 'GCP_PROJECT', Kubernetes: 'KUBERNETES_CLUSTER',
};

const SCHEDULES: readonly (readonly [string, number])[] = [['0 */6 * * *', 21600], ['0 */12 * * *', 43200], ['0 2 * * *', 86400]];

function buildTenant(s: Settings, index: number): Tenant {
  const rng = createRng(s.seed, 'tenant', index);
  const tenantId = uuid(rng);
  const organizationId = uuid(rng);
  // One offset per seed (not per tenant) keeps names distinct; past the list they repeat with a number.
  const offset = int(createRng(s.seed, 'tenant-names'), 0, TENANT_NAMES.length - 1);
  const baseName = at(TENANT_NAMES, (index + offset) % TENANT_NAMES.length);
  const name = index < TENANT_NAMES.length ? baseName : `${baseName} ${Math.floor(index / TENANT_NAMES.length) + 1}`;
  const slug = (baseName.split(' ')[0] ?? 'acme').toLowerCase();

  const environments = pick(rng, ENVIRONMENT_SETS).map(([envName, isProduction, tag]) => ({
    environmentId: uuid(rng), name: envName, isProduction, tag,
  }));

  // Every tenant has an AWS account; the first tenant covers all providers so a demo shows each of them.
  const count = index === 0 ? int(rng, 4, 6) : weighted(rng, [[2, 10], [3, 15], [4, 35], [5, 25], [6, 15]] as const);
  const others = shuffle(rng, PROVIDERS.filter((p) => p !== 'AWS'));
  const providers: Provider[] = ['AWS', ...others];
  while (providers.length < count) providers.push(pick(rng, ['AWS', 'AWS', 'Kubernetes', 'Azure', 'GCP'] as const));
  providers.length = count;
  // One integration in a few tenants was never assigned an environment.
  const unassigned = chance(rng, 0.35) ? int(rng, 0, count - 1) : -1;
  const integrations = providers.map((provider, i) =>
    buildIntegration(s, rng, { tenantId, organizationId, slug }, provider, i, i === unassigned ? null : environments[i % environments.length] ?? null));

  const byProvider = { AWS: [], Azure: [], GCP: [], Kubernetes: [] } as Record<Provider, Integration[]>;
  for (const integration of integrations) byProvider[integration.provider].push(integration);
  const kinds = ASSET_KINDS.filter((k) => byProvider[k.provider].length > 0);
  const providerTotals = new Map<Provider, number>();
  for (const k of kinds) providerTotals.set(k.provider, (providerTotals.get(k.provider) ?? 0) + k.weight);
  const entries = kinds.map((k) => [k, (PROVIDER_WEIGHTS[k.provider] * k.weight) / (providerTotals.get(k.provider) ?? 1)] as const);
  const total = entries.reduce((sum, [, w]) => sum + w, 0);
  const meanFindingsWeight = entries.reduce((sum, [k, w]) => sum + k.findingsWeight * w, 0) / total;

  return {
    index, tenantId, organizationId, name, slug, environments, integrations, byProvider,
    pickKind: weightedPicker(entries), meanFindingsWeight,
  };
}

/** The managed Kubernetes offering of the cloud a cluster region belongs to. */
const clusterFlavour = (region: string): string =>
  REGIONS.Azure.includes(region) ? 'aks' : REGIONS.GCP.includes(region) ? 'gke' : 'eks';

function buildIntegration(s: Settings, rng: Rng, owner: { tenantId: string; organizationId: string; slug: string },
  provider: Provider, ordinal: number, environment: Environment | null): Integration {
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
  const cluster = provider === 'Kubernetes'
    ? { name: `${envTag}-${clusterFlavour(clusterRegion)}-${clusterRegion.replace(/[^a-z0-9]/g, '').slice(0, 8)}-${ordinal}`, region: clusterRegion }
    : null;
  const regions = provider === 'Kubernetes' ? [clusterRegion] : [home, ...sample(rng, allRegions.filter((r) => r !== home), int(rng, 0, 2))];
  const [schedule, scanInterval] = pick(rng, SCHEDULES);
  // A few scans within the last days: the execution id of a scan is its start time in epoch milliseconds.
  const lastScan = s.now - int(rng, 10 * MINUTE, scanInterval * 1000);
  const executions = Array.from({ length: int(rng, 3, 5) }, (_, i) => lastScan - i * scanInterval * 1000 - int(rng, 0, 5 * MINUTE));
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
    status: weighted(rng, [['CONNECTED', 85], ['DEGRADED', 10], ['ERROR', 5]] as const),
    riskScore: round(float(rng, 1, 9), 1),
    awsAccountId,
    azureSubscriptionId,
    azureDirectoryId,
    gcpProjectId,
    environmentId: environment?.environmentId ?? null,
  };
  return { integrationId, provider, environment, accountNumber, awsAccountId, azureSubscriptionId, gcpProjectId, cluster, regions, executions, record };
}

const line = (kind: string, record: unknown): string => JSON.stringify({ kind, record });

// ---------------------------------------------------------------------------------------------------------------
// Asset identity: what other records need to point at an asset, recomputable from (seed, tenant, index) alone.

interface AssetCore {
  index: number;
  kind: AssetKind;
  type: string;
  service: string;
  id: string;
  region: string;
  resourceId: string;
  resourceName: string;
  name: string;
  app: string;
  component: string;
  envTag: string;
  /** The integration whose account holds the asset (used for account numbers and names). */
  integration: Integration;
  /** Usually the integration's id; about 1% of assets name an integration that does not exist. */
  integrationId: string;
  fullResourceName: string;
  resourceURL: string | null;
  /** Container image for workloads that run one. */
  image: string | null;
  /** Extra naming facts some types need later (task definition revision, Kubernetes namespace, zone). */
  detail: Readonly<Record<string, string | number>>;
}

const AWS_KINDS = ASSET_KINDS.filter((k) => k.provider === 'AWS');
const pickSharedKind = weightedPicker(AWS_KINDS.map((k) => [k, k.weight] as const));
const typeOf = (k: AssetKind): string => `${k.provider}::${k.service}::${k.resource}`;

/**
 * The identity of asset `index` of a tenant. The first SHARED_ASSET_IDS assets take their identity from a stream that
 * ignores the tenant, so every tenant has assets with the same ids (AWS ones: every tenant has an AWS integration).
 * `ghost` builds an asset that is never emitted, for risks whose primary asset is not in the inventory.
 */
function assetCore(s: Settings, tenant: Tenant, index: number, ghost?: number): AssetCore {
  const shared = ghost === undefined && index < SHARED_ASSET_IDS;
  const identity = ghost !== undefined
    ? createRng(s.seed, 'ghost-asset', tenant.index, ghost)
    : shared ? createRng(s.seed, 'shared-asset', index) : createRng(s.seed, 'asset', tenant.index, index);
  const local = shared ? createRng(s.seed, 'asset', tenant.index, index) : identity;
  const kind = shared ? pickSharedKind(identity) : tenant.pickKind(identity);
  const integration = pick(local, tenant.byProvider[kind.provider]);
  const region = kind.global ? 'global'
    : shared ? pick(identity, REGIONS.AWS) : integration.cluster?.region ?? pick(identity, integration.regions);
  const assetUuid = uuid(identity);
  // Shared identities must not depend on the tenant, so their naming context comes from the identity stream.
  const slug = shared ? pick(identity, ['corp', 'platform', 'shared', 'infra'] as const) : tenant.slug;
  const envTag = shared ? pick(identity, ['prod', 'staging', 'dev'] as const) : integration.environment?.tag ?? 'shared';
  const app = pick(identity, APPS);
  const component = pick(identity, COMPONENTS);
  const names = resourceNames(kind, identity, { slug, envTag, app, component, region, integration });
  const integrationId = chance(local, 0.01) ? uuid(local) : integration.integrationId;
  const type = typeOf(kind);
  const service = `${kind.provider}::${kind.service}`;
  const id = [ASSET_ID_PREFIX, 'assets', assetUuid, kind.provider, kind.service, kind.resource, region]
    .map((segment) => segment.toLowerCase()).join(':') + `:${names.resourceId}`;
  return {
    index, kind, type, service, id, region, app, component, envTag, integration, integrationId,
    resourceId: names.resourceId, resourceName: names.resourceName, name: names.name,
    fullResourceName: names.fullResourceName, resourceURL: names.resourceURL, image: names.image, detail: names.detail,
  };
}

interface NamingContext {
  slug: string;
  envTag: string;
  app: string;
  component: string;
  region: string;
  integration: Integration;
}

interface ResourceNames {
  resourceId: string;
  resourceName: string;
  name: string;
  fullResourceName: string;
  resourceURL: string | null;
  image: string | null;
  detail: Record<string, string | number>;
}

const semver = (rng: Rng): string => `${int(rng, 1, 4)}.${int(rng, 0, 24)}.${int(rng, 0, 30)}`;

/** A container image reference in the registry a workload of that provider would pull from. */
function containerImage(rng: Rng, provider: Provider, c: NamingContext): string {
  const repo = `${c.app}-${c.component}`;
  const registry = provider === 'Kubernetes' ? pick(rng, ['AWS', 'Azure', 'GCP', 'public'] as const) : provider;
  switch (registry) {
    case 'AWS': return `${c.integration.accountNumber}.dkr.ecr.${pick(rng, REGIONS.AWS)}.amazonaws.com/${repo}:${semver(rng)}`;
    case 'Azure': return `${c.slug}acr.azurecr.io/${c.app}/${c.component}:${semver(rng)}`;
    case 'GCP': return `${pick(rng, REGIONS.GCP)}-docker.pkg.dev/${c.slug}-artifacts/${c.app}/${c.component}:${semver(rng)}`;
    default: return pick(rng, ['docker.io/library/nginx:1.25.4', 'docker.io/bitnami/redis:7.2.4', 'ghcr.io/external-secrets/external-secrets:v0.9.13',
      'quay.io/prometheus/node-exporter:v1.7.0', 'docker.io/grafana/grafana:10.4.1', 'registry.k8s.io/ingress-nginx/controller:v1.10.0']);
  }
}

function resourceNames(kind: AssetKind, rng: Rng, c: NamingContext): ResourceNames {
  const { slug, envTag: env, app, component, region, integration } = c;
  const account = integration.accountNumber;
  const aws = (service: string, resource: string, console: string) => ({
    fullResourceName: `arn:aws:${service}:${service === 's3' || service === 'iam' ? '' : region}:${service === 's3' ? '' : account}:${resource}`,
    resourceURL: `https://${region === 'global' ? 'us-east-1' : region}.console.aws.amazon.com/${console}`,
  });
  const base = { image: null, detail: {} };
  switch (typeOf(kind)) {
    case 'AWS::EC2::Instance': {
      const instanceId = `i-0${hex(rng, 16)}`;
      const name = `${app}-${component}-${env}-${int(rng, 1, 40)}`;
      return { ...base, resourceId: instanceId, resourceName: name, name, detail: { zone: `${region}${pick(rng, ['a', 'b', 'c'])}` },
        ...aws('ec2', `instance/${instanceId}`, `ec2/home?region=${region}#InstanceDetails:instanceId=${instanceId}`) };
    }
    case 'AWS::S3::Bucket': {
      const bucket = `${slug}-${app}-${pick(rng, BUCKET_PURPOSES)}-${env}-${hex(rng, 6)}`;
      return { ...base, resourceId: bucket, resourceName: bucket, name: bucket,
        ...aws('s3', bucket, `s3/buckets/${bucket}?region=${region}`) };
    }
    case 'AWS::Lambda::Function': {
      const fn = `${app}-${component}-${env}-${alnum(rng, 6)}`;
      return { ...base, resourceId: `function/${fn}`, resourceName: fn, name: fn,
        ...aws('lambda', `function:${fn}`, `lambda/home?region=${region}#/functions/${fn}`) };
    }
    case 'AWS::ECS::TaskDefinition': {
      const family = `${app}-${component}`;
      const revision = int(rng, 1, 180);
      return { resourceId: `task-definition/${family}:${revision}`, resourceName: family, name: `${family}:${revision}`,
        image: containerImage(rng, 'AWS', c), detail: { revision },
        ...aws('ecs', `task-definition/${family}:${revision}`, `ecs/v2/task-definitions/${family}/${revision}?region=${region}`) };
    }
    case 'AWS::RDS::DBInstance': {
      const db = `${app}-${env}-${pick(rng, ['postgres', 'mysql', 'aurora'] as const)}-${int(rng, 1, 9)}`;
      return { ...base, resourceId: `db/${db}`, resourceName: db, name: db,
        ...aws('rds', `db:${db}`, `rds/home?region=${region}#database:id=${db}`) };
    }
    case 'AWS::IAM::Role': {
      const role = chance(rng, 0.15)
        ? pick(rng, ['OrganizationAccountAccessRole', 'github-actions-deploy', 'terraform-ci', 'AWSServiceRoleForECS', 'break-glass-admin'])
        : `${app}-${component}-${env}-role`;
      return { ...base, resourceId: `role/${role}`, resourceName: role, name: role,
        ...aws('iam', `role/${role}`, `iam/home#/roles/details/${role}`) };
    }
    case 'AWS::EC2::SecurityGroup': {
      const sg = `sg-0${hex(rng, 16)}`;
      const name = `${app}-${component}-${env}-sg`;
      return { ...base, resourceId: sg, resourceName: name, name,
        ...aws('ec2', `security-group/${sg}`, `ec2/home?region=${region}#SecurityGroup:groupId=${sg}`) };
    }
    case 'AWS::DynamoDB::Table': {
      const table = `${app}-${pick(rng, ['events', 'sessions', 'state', 'idempotency', 'jobs'])}-${env}`;
      return { ...base, resourceId: `table/${table}`, resourceName: table, name: table,
        ...aws('dynamodb', `table/${table}`, `dynamodbv2/home?region=${region}#table?name=${table}`) };
    }
    case 'AWS::EKS::Cluster': {
      const cluster = `${env}-${app}-eks-${int(rng, 1, 3)}`;
      return { ...base, resourceId: `cluster/${cluster}`, resourceName: cluster, name: cluster,
        ...aws('eks', `cluster/${cluster}`, `eks/home?region=${region}#/clusters/${cluster}`) };
    }
  }
  if (kind.provider === 'Azure') return azureNames(kind, rng, c);
  if (kind.provider === 'GCP') return gcpNames(kind, rng, c);
  return kubernetesNames(kind, rng, c);
}

const AZURE_PROVIDERS: Readonly<Record<string, string>> = {
  VirtualMachine: 'Microsoft.Compute/virtualMachines', StorageAccount: 'Microsoft.Storage/storageAccounts',
  Site: 'Microsoft.Web/sites', Server: 'Microsoft.Sql/servers',
  NetworkSecurityGroup: 'Microsoft.Network/networkSecurityGroups', Vault: 'Microsoft.KeyVault/vaults',
};

function azureNames(kind: AssetKind, rng: Rng, c: NamingContext): ResourceNames {
  const { slug, envTag: env, app, component } = c;
  const name = {
    VirtualMachine: `vm-${app}-${env}-${String(int(rng, 1, 30)).padStart(2, '0')}`,
    // Storage account names: 3 to 24 lower-case letters and digits.
    StorageAccount: `st${slug}${app}${hex(rng, 4)}`.slice(0, 24),
    Site: `app-${app}-${component}-${env}`,
    Server: `sql-${app}-${env}`,
    NetworkSecurityGroup: `nsg-${app}-${component}-${env}`,
    Vault: `kv-${app}-${env}-${hex(rng, 3)}`,
  }[kind.resource] ?? `${app}-${env}`;
  const resourceId = `/subscriptions/${c.integration.azureSubscriptionId ?? ''}/resourceGroups/rg-${app}-${env}/providers/${AZURE_PROVIDERS[kind.resource] ?? 'Microsoft.Resources/resources'}/${name}`;
  return {
    resourceId, resourceName: name, name, fullResourceName: resourceId,
    resourceURL: `https://portal.azure.com/#@${slug}.onmicrosoft.com/resource${resourceId}/overview`,
    image: kind.resource === 'Site' && chance(rng, 0.3) ? containerImage(rng, 'Azure', c) : null, detail: {},
  };
}

function gcpNames(kind: AssetKind, rng: Rng, c: NamingContext): ResourceNames {
  const { envTag: env, app, component, region } = c;
  const project = c.integration.gcpProjectId ?? 'unknown-project';
  const names = (resourceId: string, api: string, resourceName: string, url: string, extra: Partial<ResourceNames> = {}): ResourceNames => ({
    resourceId, resourceName, name: resourceName, fullResourceName: `//${api}.googleapis.com/${resourceId}`,
    resourceURL: `https://console.cloud.google.com/${url}`, image: null, detail: {}, ...extra,
  });
  switch (kind.resource) {
    case 'Instance': {
      if (kind.service === 'SQL') {
        const db = `${app}-${env}-pg-${int(rng, 1, 5)}`;
        return names(`projects/${project}/instances/${db}`, 'sqladmin', db, `sql/instances/${db}/overview?project=${project}`);
      }
      const zone = `${region}-${pick(rng, ['a', 'b', 'c'])}`;
      const vm = `${app}-${component}-${env}-${alnum(rng, 4)}`;
      return names(`projects/${project}/zones/${zone}/instances/${vm}`, 'compute', vm,
        `compute/instancesDetail/zones/${zone}/instances/${vm}?project=${project}`, { detail: { zone } });
    }
    case 'Bucket': {
      const bucket = `${project}-${pick(rng, BUCKET_PURPOSES)}-${hex(rng, 4)}`;
      return names(`projects/_/buckets/${bucket}`, 'storage', bucket, `storage/browser/${bucket}?project=${project}`);
    }
    case 'Service': {
      const svc = `${app}-${component}`;
      return names(`projects/${project}/locations/${region}/services/${svc}`, 'run', svc,
        `run/detail/${region}/${svc}/metrics?project=${project}`, { image: containerImage(rng, 'GCP', c) });
    }
    case 'Function': {
      const fn = `${app}-${component}-${pick(rng, ['handler', 'trigger', 'sync', 'export'])}`;
      return names(`projects/${project}/locations/${region}/functions/${fn}`, 'cloudfunctions', fn,
        `functions/details/${region}/${fn}?project=${project}`);
    }
    default: {
      const email = `${app}-${component}@${project}.iam.gserviceaccount.com`;
      return names(`projects/${project}/serviceAccounts/${email}`, 'iam', email, `iam-admin/serviceaccounts?project=${project}`);
    }
  }
}

const DAEMONSETS: readonly string[] = ['fluent-bit', 'node-exporter', 'datadog-agent', 'kube-proxy', 'aws-node', 'calico-node', 'falco'];
const SYSTEM_NAMESPACES: readonly string[] = ['kube-system', 'monitoring', 'ingress-nginx', 'cert-manager', 'argocd'];

function kubernetesNames(kind: AssetKind, rng: Rng, c: NamingContext): ResourceNames {
  const { envTag: env, app, component } = c;
  const cluster = c.integration.cluster?.name ?? 'cluster';
  const namespace = chance(rng, 0.85) ? (chance(rng, 0.5) ? app : `${app}-${env}`) : pick(rng, SYSTEM_NAMESPACES);
  const workload = `${app}-${component}`;
  let resourceId: string;
  let name: string;
  let image: string | null = null;
  switch (kind.resource) {
    case 'Pod':
      name = `${workload}-${alnum(rng, 10)}-${alnum(rng, 5)}`;
      resourceId = `namespaces/${namespace}/pods/${name}`;
      image = containerImage(rng, 'Kubernetes', c);
      break;
    case 'Deployment':
      name = workload;
      resourceId = `namespaces/${namespace}/deployments/${name}`;
      image = containerImage(rng, 'Kubernetes', c);
      break;
    case 'DaemonSet':
      name = pick(rng, DAEMONSETS);
      resourceId = `namespaces/kube-system/daemonsets/${name}`;
      image = containerImage(rng, 'Kubernetes', c);
      break;
    case 'Service':
      name = workload;
      resourceId = `namespaces/${namespace}/services/${name}`;
      break;
    case 'Namespace':
      name = namespace;
      resourceId = `namespaces/${namespace}`;
      break;
    default:
      name = chance(rng, 0.3) ? pick(rng, ['cluster-admin-ci', 'ops-admins', 'argocd-application-controller']) : `${workload}-reader`;
      resourceId = `clusterrolebindings/${name}`;
  }
  return {
    resourceId, resourceName: name, name, fullResourceName: `k8s://${cluster}/${resourceId}`, resourceURL: null,
    image, detail: { namespace, cluster },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// The full asset record

/** What the findings of an asset need to know about it. */
interface ScanProfile {
  os: OsRelease | null;
  /** Package ecosystems present on the asset; its findings come from these pools. */
  ecosystems: readonly Ecosystem[];
  /** targetName of its OS packages, e.g. `payments-api:1.4.2 (alpine 3.19.1)`. */
  osTarget: string;
  /** The finding-level targetName (for ECS task definitions `{TaskDefinition}:{revision} > {containerImage}`). */
  targetName: string;
  /** Directory of the application, under which language packages are found. */
  appRoot: string;
}

interface BuiltAsset {
  core: AssetCore;
  record: Record<string, unknown>;
  schemaVersion: string;
  executionId: number;
  firstObservedMs: number;
  lastObservedMs: number;
  scan: ScanProfile;
}

const COMPUTE: ReadonlySet<Category> = new Set(['vm', 'task', 'pod', 'workload', 'function']);
const CONTAINERS: ReadonlySet<Category> = new Set(['task', 'pod', 'workload']);
const vmRelease = weightedPicker(VM_RELEASES);
const containerRelease = weightedPicker(CONTAINER_RELEASES);

/** Probability of each boolean attribute per category: [publiclyExposed, inVpc, admin, overlyPermissive, privEsc]. */
const EXPOSURE: Readonly<Record<Category, readonly [number, number, number, number, number]>> = {
  vm: [0.25, 0.95, 0.05, 0.1, 0.04],
  task: [0.15, 1, 0.04, 0.12, 0.03],
  function: [0.3, 0.4, 0.08, 0.2, 0.05],
  pod: [0.1, 1, 0.05, 0.08, 0.06],
  workload: [0.12, 1, 0.05, 0.08, 0.06],
  bucket: [0.08, 0, 0, 0.1, 0],
  database: [0.05, 0.9, 0, 0.05, 0],
  identity: [0, 0, 0.15, 0.3, 0.12],
  network: [0.2, 0.9, 0, 0.25, 0],
  cluster: [0.2, 1, 0.03, 0.1, 0.02],
};

function buildAsset(s: Settings, tenant: Tenant, core: AssetCore): BuiltAsset {
  const rng = createRng(s.seed, 'asset-details', tenant.index, core.index);
  const { kind } = core;
  const category = kind.category;

  // Most assets were seen by their integration's latest scan; some only by an older one, a few went stale.
  const executions = core.integration.executions;
  const execution = chance(rng, 0.85) ? at(executions, 0) : pick(rng, executions);
  const scannedAt = execution + int(rng, 5_000, 40 * MINUTE);
  const lastObservedMs = chance(rng, 0.06) ? scannedAt - int(rng, 3 * DAY, 120 * DAY) : scannedAt;
  const createdMs = Math.max(s.now - HISTORY, lastObservedMs - int(rng, DAY, 700 * DAY));
  const firstObservedMs = Math.min(lastObservedMs, createdMs + int(rng, 10 * MINUTE, 2 * DAY));
  const updatedMs = dateBetween(rng, firstObservedMs, lastObservedMs);

  const os = category === 'vm' ? vmRelease(rng) : CONTAINERS.has(category) ? containerRelease(rng) : null;
  // Half the Linux hosts run no application packages; a Windows host is scanned only for its applications' packages.
  const languages = kind.languages.length === 0 || (category === 'vm' && os?.ecosystem && chance(rng, 0.5))
    ? [] : sample(rng, kind.languages, chance(rng, 0.75) ? 1 : 2);
  const ecosystems = os?.ecosystem ? [os.ecosystem, ...languages] : languages;
  const [isPubliclyExposed, isInVpc, admin, permissive, escalation] = EXPOSURE[category];
  const exposed = chance(rng, isPubliclyExposed);
  const hasAdminPrivileges = chance(rng, admin);

  const imageId = category === 'vm' ? machineImage(rng, kind.provider, os) : core.image ? `sha256:${hex(rng, 64)}` : null;
  const platform = category === 'vm' ? (os?.platform === 'windows' ? 'Windows' : 'Linux/UNIX')
    : core.image ? pick(rng, ['linux/amd64', 'linux/amd64', 'linux/arm64'] as const) : null;
  const osTarget = `${core.image ?? core.name} (${os?.targetType ?? 'unknown'} ${os?.version ?? ''})`;
  const targetName = kind.resource === 'TaskDefinition' ? `${core.resourceName}:${core.detail.revision ?? 1} > ${core.image ?? ''}` : core.image ?? core.name;

  const operationalState = core.type === OPERATIONAL_STATE_TYPE ? (chance(rng, 0.85) ? 'active' : 'inactive')
    : category === 'vm' && chance(rng, 0.05) ? pick(rng, ['active', 'inactive'] as const) : null;
  const riskScore = chance(rng, 0.08) ? null
    : round(Math.min(10, float(rng, 0, 5.5) + (exposed ? 2.5 : 0) + (hasAdminPrivileges ? 1.5 : 0) + (ecosystems.length > 0 ? 0.5 : 0)), 1);

  const secrets = COMPUTE.has(category) && chance(rng, 0.15) ? secretsOf(rng, core) : { low: [], medium: [], high: [], critical: [] };
  const tags = tagsOf(rng, tenant, core);
  const schemaVersion = pick(rng, SCHEMA_VERSIONS);

  const record = {
    schemaVersion,
    id: core.id,
    organizationId: tenant.organizationId,
    tenantId: tenant.tenantId,
    integrationId: core.integrationId,
    executionId: execution,
    provider: kind.provider,
    type: core.type,
    name: core.name,
    createdAt: isoTime(createdMs),
    firstObservedAt: isoTime(firstObservedMs),
    lastObservedAt: isoTime(lastObservedMs),
    updatedAt: isoTime(updatedMs),
    tags,
    isPubliclyExposed: exposed,
    isInVpc: chance(rng, isInVpc),
    lastScanId: 4_000_000 + Math.floor((execution - s.now + HISTORY) / MINUTE),
    lastScannedAt: isoTime(scannedAt),
    imageId,
    platform,
    hasAdminPrivileges,
    hasOverlyPermissivePrivileges: hasAdminPrivileges || chance(rng, permissive),
    hasAuthorizer: category === 'function' && chance(rng, 0.6),
    hasTracingEnabled: (category === 'function' && chance(rng, 0.45)) || (category === 'task' && chance(rng, 0.2)),
    policy: policyOf(rng, core, hasAdminPrivileges, exposed),
    numberOfLowSecrets: secrets.low.length,
    numberOfMediumSecrets: secrets.medium.length,
    numberOfHighSecrets: secrets.high.length,
    numberOfCriticalSecrets: secrets.critical.length,
    lowSecrets: secrets.low,
    mediumSecrets: secrets.medium,
    highSecrets: secrets.high,
    criticalSecrets: secrets.critical,
    operatingSystem: os ? [operatingSystemOf(rng, os, category === 'vm')] : [],
    riskScore,
    operationalState,
    region: core.region,
    service: core.service,
    resourceId: core.resourceId,
    resourceName: core.resourceName,
    resourceTags: resourceTagsOf(rng, core, tags),
    resourceType: core.type,
    fullResourceName: core.fullResourceName,
    providerAccountId: core.integration.accountNumber,
    resourceURL: core.resourceURL,
    isSusceptibleToPrivilegeEscalation: chance(rng, escalation),
    rawData: rawDataOf(rng, core, { exposed, os, createdMs, imageId, tags, operationalState }),
  };
  return {
    core, record, schemaVersion, executionId: execution, firstObservedMs, lastObservedMs,
    scan: { os, ecosystems, osTarget, targetName, appRoot: appRootOf(core, languages) },
  };
}

function machineImage(rng: Rng, provider: Provider, os: OsRelease | null): string {
  const windows = os?.platform === 'windows';
  switch (provider) {
    case 'AWS': return `ami-0${hex(rng, 16)}`;
    case 'Azure': return windows ? 'MicrosoftWindowsServer:WindowsServer:2022-datacenter-azure-edition:latest'
      : os?.targetType === 'debian' ? 'Debian:debian-12:12-gen2:latest' : 'Canonical:0001-com-ubuntu-server-jammy:22_04-lts-gen2:latest';
    default: return windows ? 'projects/windows-cloud/global/images/windows-server-2022-dc-v20240313'
      : os?.targetType === 'debian' ? 'projects/debian-cloud/global/images/debian-12-bookworm-v20240312'
        : 'projects/ubuntu-os-cloud/global/images/ubuntu-2204-jammy-v20240319';
  }
}

function operatingSystemOf(rng: Rng, os: OsRelease, host: boolean): Record<string, unknown> {
  return {
    architecture: chance(rng, 0.8) ? 'x86_64' : 'arm64',
    name: os.name,
    platform: os.platform,
    version: os.version,
    versionId: os.versionId,
    activeKernel: host && os.kernels.length > 0 ? pick(rng, os.kernels) : null,
    buildNumber: os.buildNumber,
    lcuVersion: os.lcuVersion,
  };
}

function appRootOf(core: AssetCore, languages: readonly Ecosystem[]): string {
  if (core.kind.category === 'function') return core.kind.provider === 'AWS' ? 'var/task' : 'workspace';
  if (core.kind.category === 'vm') return `opt/${core.app}-${core.component}`;
  return languages.includes('jar') ? 'app' : 'usr/src/app';
}

/** A rare tag that one exemption targets; rare so the exemption stays a small fraction of findings. */
const DECOMMISSION_TAG = { key: 'lifecycle', value: 'decommissioning' } as const;

function tagsOf(rng: Rng, tenant: Tenant, core: AssetCore): { Key: string; Value: string }[] {
  const tags: { Key: string; Value: string }[] = [];
  // Kubernetes objects carry labels, not cloud tags; their normalised tags are fewer.
  const cloud = core.kind.provider !== 'Kubernetes';
  if (chance(rng, 0.92)) tags.push({ Key: 'Environment', Value: core.envTag });
  if (chance(rng, 0.8)) tags.push({ Key: 'Application', Value: core.app });
  if (chance(rng, 0.7)) tags.push({ Key: 'Team', Value: pick(rng, TEAMS) });
  if (cloud && chance(rng, 0.5)) tags.push({ Key: 'Owner', Value: `${pick(rng, TEAMS)}@${tenant.slug}.example.com` });
  if (cloud && chance(rng, 0.45)) tags.push({ Key: 'CostCenter', Value: `cc-${int(rng, 1000, 1099)}` });
  if (chance(rng, 0.6)) tags.push({ Key: 'ManagedBy', Value: cloud ? pick(rng, ['terraform', 'terraform', 'cloudformation', 'pulumi'] as const) : 'helm' });
  if (core.kind.category === 'bucket' || core.kind.category === 'database') {
    tags.push({ Key: 'DataClassification', Value: pick(rng, ['confidential', 'internal', 'internal', 'public'] as const) });
  }
  if (chance(rng, 0.05) && ['payments', 'checkout', 'billing', 'ledger'].includes(core.app)) tags.push({ Key: 'Compliance', Value: 'pci-dss' });
  if (chance(rng, 0.015)) tags.push({ Key: DECOMMISSION_TAG.key, Value: DECOMMISSION_TAG.value });
  return tags;
}


function resourceTagsOf(rng: Rng, core: AssetCore, tags: readonly { Key: string; Value: string }[]): { Key: string; Value: string | boolean }[] {
  const out: { Key: string; Value: string | boolean }[] = [];
  switch (core.kind.provider) {
    case 'Kubernetes':
      out.push({ Key: 'app.kubernetes.io/name', Value: `${core.app}-${core.component}` });
      out.push({ Key: 'app.kubernetes.io/part-of', Value: core.app });
      if (chance(rng, 0.6)) out.push({ Key: 'app.kubernetes.io/managed-by', Value: 'Helm' });
      break;
    case 'GCP':
      // GCP labels are lower-case.
      for (const t of tags) out.push({ Key: t.Key.toLowerCase(), Value: t.Value.toLowerCase() });
      break;
    default:
      for (const t of tags) out.push({ Key: t.Key, Value: t.Value });
      if (core.kind.provider === 'AWS' && chance(rng, 0.3)) out.push({ Key: 'aws:cloudformation:stack-name', Value: `${core.app}-${core.envTag}` });
  }
  if (chance(rng, 0.3)) out.push({ Key: 'backup', Value: chance(rng, 0.7) });
  if (chance(rng, 0.1)) out.push({ Key: 'auto-shutdown', Value: true });
  return out;
}

type Secret = { type: string; path: string; line: number; sha: string };

function secretsOf(rng: Rng, core: AssetCore): { low: Secret[]; medium: Secret[]; high: Secret[]; critical: Secret[] } {
  const out = { low: [] as Secret[], medium: [] as Secret[], high: [] as Secret[], critical: [] as Secret[] };
  const count = weighted(rng, [[1, 60], [2, 25], [3, 10], [5, 5]] as const);
  for (let i = 0; i < count; i++) {
    const [type, paths] = pick(rng, SECRET_TYPES);
    const path = core.kind.category === 'function' ? `/var/task/${pick(rng, ['.env', 'config.json', 'settings.py'])}` : pick(rng, paths);
    const secret = { type, path, line: int(rng, 1, 240), sha: hex(rng, 64) };
    const level = type === 'private-key' || type === 'aws-access-key-id' ? (chance(rng, 0.6) ? 'critical' : 'high')
      : weighted(rng, [['high', 30], ['medium', 45], ['low', 25]] as const);
    out[level].push(secret);
  }
  return out;
}

function policyOf(rng: Rng, core: AssetCore, admin: boolean, exposed: boolean): Record<string, unknown> | null {
  const { category, provider } = core.kind;
  if (provider !== 'AWS' && provider !== 'GCP') return null;
  if (category === 'identity') {
    if (provider === 'GCP') {
      return { bindings: [{ role: admin ? 'roles/owner' : pick(rng, ['roles/storage.objectViewer', 'roles/pubsub.publisher', 'roles/cloudsql.client']), members: [`serviceAccount:${core.name}`] }], etag: `BwX${alnum(rng, 8)}`, version: 1 };
    }
    return {
      Version: '2012-10-17',
      Statement: [
        admin
          ? { Sid: 'AdminAccess', Effect: 'Allow', Action: '*', Resource: '*' }
          : { Sid: 'AppAccess', Effect: 'Allow', Action: sample(rng, ['s3:GetObject', 's3:PutObject', 'sqs:SendMessage', 'dynamodb:Query', 'kms:Decrypt', 'secretsmanager:GetSecretValue'], int(rng, 1, 4)), Resource: [`arn:aws:s3:::${core.app}-*`] },
        { Sid: 'AssumeFromService', Effect: 'Allow', Principal: { Service: pick(rng, ['ec2.amazonaws.com', 'ecs-tasks.amazonaws.com', 'lambda.amazonaws.com']) }, Action: 'sts:AssumeRole', Condition: null },
      ],
    };
  }
  if (category === 'bucket' && chance(rng, 0.6)) {
    return {
      Version: '2012-10-17',
      Statement: [{
        Sid: exposed ? 'PublicRead' : 'DenyInsecureTransport',
        Effect: exposed ? 'Allow' : 'Deny',
        Principal: '*',
        Action: exposed ? 's3:GetObject' : 's3:*',
        Resource: [`arn:aws:s3:::${core.resourceName}/*`],
        Condition: exposed ? null : { Bool: { 'aws:SecureTransport': 'false' } },
      }],
    };
  }
  if (category === 'function' && chance(rng, 0.3)) {
    return { Version: '2012-10-17', Id: 'default', Statement: [{ Sid: `apigw-${hex(rng, 8)}`, Effect: 'Allow', Principal: { Service: 'apigateway.amazonaws.com' }, Action: 'lambda:InvokeFunction', Resource: core.fullResourceName }] };
  }
  return null;
}

interface RawFacts {
  exposed: boolean;
  os: OsRelease | null;
  createdMs: number;
  imageId: string | null;
  tags: readonly { Key: string; Value: string }[];
  operationalState: string | null;
}

const privateIp = (rng: Rng): string => `10.${int(rng, 0, 63)}.${int(rng, 0, 255)}.${int(rng, 4, 254)}`;
const publicIp = (rng: Rng): string => `${pick(rng, [3, 18, 34, 35, 52, 54, 20, 40] as const)}.${int(rng, 0, 255)}.${int(rng, 0, 255)}.${int(rng, 1, 254)}`;

/**
 * The provider's own description of the resource, as a scanner would store it: nested objects, arrays, numbers,
 * booleans and nulls, so the `metadata` filter has realistic material to search.
 */
function rawDataOf(rng: Rng, core: AssetCore, f: RawFacts): Record<string, unknown> {
  const collected = {
    collector: `${core.kind.provider.toLowerCase()}-inventory`,
    collectorVersion: `${int(rng, 2, 3)}.${int(rng, 0, 14)}.${int(rng, 0, 9)}`,
    apiCalls: int(rng, 1, 6),
    partial: chance(rng, 0.02),
  };
  const configuration = configurationOf(rng, core, f);
  return { resourceType: core.type, region: core.region, createdAt: isoTime(f.createdMs), configuration, collected };
}

function configurationOf(rng: Rng, core: AssetCore, f: RawFacts): Record<string, unknown> {
  const { provider, category } = core.kind;
  if (provider === 'Kubernetes') return kubernetesObject(rng, core, f.createdMs);
  switch (category) {
    case 'vm':
      return provider === 'AWS' ? {
        InstanceId: core.resourceId,
        InstanceType: pick(rng, ['t3.medium', 'm6i.large', 'm6i.xlarge', 'c6g.2xlarge', 'r6i.large', 't3.micro']),
        ImageId: f.imageId,
        State: { Code: f.operationalState === 'inactive' ? 80 : 16, Name: f.operationalState === 'inactive' ? 'stopped' : 'running' },
        Placement: { AvailabilityZone: core.detail.zone ?? null, Tenancy: 'default', GroupName: '' },
        PrivateIpAddress: privateIp(rng),
        PublicIpAddress: f.exposed ? publicIp(rng) : null,
        IamInstanceProfile: chance(rng, 0.7) ? { Arn: `arn:aws:iam::${core.integration.accountNumber}:instance-profile/${core.app}-${core.component}` } : null,
        SecurityGroups: [{ GroupId: `sg-0${hex(rng, 16)}`, GroupName: `${core.app}-${core.component}-sg` }],
        MetadataOptions: { HttpTokens: chance(rng, 0.7) ? 'required' : 'optional', HttpPutResponseHopLimit: pick(rng, [1, 2] as const), HttpEndpoint: 'enabled' },
        BlockDeviceMappings: [{ DeviceName: '/dev/xvda', Ebs: { VolumeId: `vol-0${hex(rng, 16)}`, DeleteOnTermination: true, Encrypted: chance(rng, 0.8), VolumeSize: pick(rng, [8, 20, 50, 100] as const) } }],
        Monitoring: { State: chance(rng, 0.3) ? 'enabled' : 'disabled' },
        EbsOptimized: chance(rng, 0.6),
        Tags: f.tags.map((t) => ({ Key: t.Key, Value: t.Value })),
      } : {
        name: core.resourceName,
        vmSize: provider === 'Azure' ? pick(rng, ['Standard_B2s', 'Standard_D4s_v5', 'Standard_E8s_v5']) : pick(rng, ['e2-medium', 'n2-standard-4', 'c3-standard-8']),
        osProfile: { computerName: core.resourceName, adminUsername: pick(rng, ['azureuser', 'ops', 'admin']), linuxConfiguration: f.os?.platform === 'linux' ? { disablePasswordAuthentication: chance(rng, 0.85), sshKeys: int(rng, 1, 3) } : null },
        networkInterfaces: [{ privateIp: privateIp(rng), publicIp: f.exposed ? publicIp(rng) : null, acceleratedNetworking: chance(rng, 0.5) }],
        disks: [{ sizeGb: pick(rng, [30, 64, 128, 256] as const), encryption: pick(rng, ['platform-managed', 'customer-managed'] as const), type: 'Premium_LRS' }],
        shieldedVm: provider === 'GCP' ? { secureBoot: chance(rng, 0.4), vtpm: true, integrityMonitoring: true } : null,
        labels: Object.fromEntries(f.tags.map((t) => [t.Key.toLowerCase(), t.Value])),
      };
    case 'bucket':
      return {
        name: core.resourceName,
        versioning: { status: chance(rng, 0.6) ? 'Enabled' : 'Suspended', mfaDelete: chance(rng, 0.05) },
        encryption: { rules: [{ algorithm: chance(rng, 0.7) ? 'AES256' : 'aws:kms', bucketKeyEnabled: chance(rng, 0.5) }] },
        publicAccessBlock: f.exposed ? null : { blockPublicAcls: true, ignorePublicAcls: true, blockPublicPolicy: true, restrictPublicBuckets: true },
        logging: chance(rng, 0.4) ? { targetBucket: `${core.app}-access-logs`, targetPrefix: `${core.resourceName}/` } : null,
        lifecycleRules: int(rng, 0, 4),
        objectCountEstimate: int(rng, 0, 5_000_000),
        sizeBytes: int(rng, 0, 2_000_000_000),
      };
    case 'function':
      return {
        functionName: core.resourceName,
        runtime: pick(rng, ['nodejs20.x', 'nodejs18.x', 'python3.12', 'python3.11', 'java21']),
        handler: pick(rng, ['index.handler', 'app.lambda_handler', 'main.handler']),
        memorySize: pick(rng, [128, 256, 512, 1024, 2048] as const),
        timeout: pick(rng, [3, 15, 30, 60, 300, 900] as const),
        environment: { variables: { NODE_ENV: core.envTag === 'prod' ? 'production' : core.envTag, LOG_LEVEL: pick(rng, ['info', 'debug', 'warn']), TABLE_NAME: `${core.app}-${core.envTag}` } },
        tracingConfig: { mode: chance(rng, 0.45) ? 'Active' : 'PassThrough' },
        layers: chance(rng, 0.3) ? [{ arn: `arn:aws:lambda:${core.region}:${int(rng, 100_000_000_000, 999_999_999_999)}:layer:observability:${int(rng, 10, 60)}`, codeSize: int(rng, 100_000, 9_000_000) }] : [],
        url: f.exposed ? { authType: chance(rng, 0.5) ? 'NONE' : 'AWS_IAM', cors: { allowOrigins: ['*'] } } : null,
        reservedConcurrency: chance(rng, 0.2) ? int(rng, 1, 100) : null,
      };
    case 'task':
      return {
        family: core.resourceName,
        revision: core.detail.revision ?? int(rng, 1, 50),
        networkMode: 'awsvpc',
        cpu: String(pick(rng, [256, 512, 1024, 2048] as const)),
        memory: String(pick(rng, [512, 1024, 2048, 4096] as const)),
        requiresCompatibilities: ['FARGATE'],
        containerDefinitions: [{
          name: core.component,
          image: core.image,
          essential: true,
          privileged: chance(rng, 0.05),
          readonlyRootFilesystem: chance(rng, 0.3),
          portMappings: [{ containerPort: pick(rng, [80, 3000, 8080, 8443] as const), protocol: 'tcp' }],
          environment: [{ name: 'SERVICE_NAME', value: `${core.app}-${core.component}` }, { name: 'OTEL_ENABLED', value: String(chance(rng, 0.5)) }],
          logConfiguration: { logDriver: 'awslogs', options: { 'awslogs-group': `/ecs/${core.resourceName}`, 'awslogs-region': core.region } },
        }],
        taskRoleArn: chance(rng, 0.8) ? `arn:aws:iam::${core.integration.accountNumber}:role/${core.app}-${core.component}-task-role` : null,
      };
    case 'database':
      return {
        identifier: core.resourceName,
        engine: pick(rng, ['postgres', 'mysql', 'aurora-postgresql', 'sqlserver'] as const),
        engineVersion: pick(rng, ['15.5', '14.10', '8.0.35', '13.12'] as const),
        instanceClass: pick(rng, ['db.t4g.medium', 'db.r6g.large', 'db.m6i.xlarge', 'GP_Gen5_4']),
        multiAz: chance(rng, 0.5),
        storageEncrypted: chance(rng, 0.9),
        publiclyAccessible: f.exposed,
        backupRetentionPeriod: pick(rng, [0, 1, 7, 14, 35] as const),
        endpoint: { address: `${core.resourceName}.${hex(rng, 12)}.${core.region}.rds.amazonaws.com`, port: pick(rng, [5432, 3306, 1433] as const) },
        deletionProtection: chance(rng, 0.6),
      };
    case 'identity':
      return {
        name: core.resourceName,
        path: '/',
        maxSessionDuration: pick(rng, [3600, 7200, 43200] as const),
        lastUsed: chance(rng, 0.8) ? { date: isoTime(f.createdMs + int(rng, DAY, 200 * DAY)), region: pick(rng, REGIONS.AWS) } : null,
        attachedPolicies: sample(rng, ['AdministratorAccess', 'ReadOnlyAccess', 'AmazonS3FullAccess', 'CloudWatchAgentServerPolicy', `${core.app}-app-policy`], int(rng, 1, 3)).map((name) => ({ name, managed: !name.startsWith(core.app) })),
        permissionsBoundary: chance(rng, 0.2) ? { type: 'Policy', arn: `arn:aws:iam::${core.integration.accountNumber}:policy/boundary` } : null,
      };
    case 'network':
      return {
        groupName: core.resourceName,
        description: `Security group for ${core.app} ${core.component}`,
        vpcId: `vpc-0${hex(rng, 16)}`,
        ingress: [
          { protocol: 'tcp', fromPort: 443, toPort: 443, cidrs: [f.exposed ? '0.0.0.0/0' : '10.0.0.0/8'] },
          ...(f.exposed && chance(rng, 0.5) ? [{ protocol: 'tcp', fromPort: 22, toPort: 22, cidrs: ['0.0.0.0/0'] }] : []),
        ],
        egress: [{ protocol: '-1', fromPort: 0, toPort: 0, cidrs: ['0.0.0.0/0'] }],
        referencedBy: int(rng, 0, 12),
      };
    default:
      return {
        name: core.resourceName,
        version: pick(rng, ['1.28', '1.29', '1.30'] as const),
        endpointPublicAccess: f.exposed,
        endpointPrivateAccess: true,
        logging: { api: chance(rng, 0.5), audit: chance(rng, 0.4), authenticator: chance(rng, 0.3) },
        nodeGroups: Array.from({ length: int(rng, 1, 3) }, (_, i) => ({ name: `ng-${i + 1}`, instanceType: pick(rng, ['m6i.large', 'm6g.xlarge', 'c6i.2xlarge']), desiredSize: int(rng, 1, 12) })),
      };
  }
}

/** A node name in the style of the cluster's managed offering. */
function nodeName(rng: Rng, core: AssetCore): string {
  const cluster = core.integration.cluster;
  switch (cluster ? clusterFlavour(cluster.region) : 'eks') {
    case 'aks': return `aks-nodepool1-${int(rng, 10_000_000, 99_999_999)}-vmss0000${int(rng, 0, 9)}${alnum(rng, 1)}`;
    case 'gke': return `gke-${cluster?.name ?? 'cluster'}-default-pool-${hex(rng, 8)}-${alnum(rng, 4)}`;
    default: return `ip-${privateIp(rng).replace(/\./g, '-')}.${core.region}.compute.internal`;
  }
}

function kubernetesObject(rng: Rng, core: AssetCore, createdMs: number): Record<string, unknown> {
  const namespace = core.detail.namespace ?? 'default';
  const metadata = {
    name: core.resourceName,
    namespace: core.kind.resource === 'Namespace' || core.kind.resource === 'ClusterRoleBinding' ? null : namespace,
    uid: uuid(rng),
    labels: { 'app.kubernetes.io/name': `${core.app}-${core.component}`, 'app.kubernetes.io/part-of': core.app },
    annotations: chance(rng, 0.4) ? { 'kubectl.kubernetes.io/restartedAt': isoTime(createdMs + int(rng, MINUTE, DAY)) } : {},
  };
  const container = () => ({
    name: core.component,
    image: core.image,
    securityContext: {
      privileged: chance(rng, 0.06),
      runAsNonRoot: chance(rng, 0.55),
      allowPrivilegeEscalation: chance(rng, 0.3),
      readOnlyRootFilesystem: chance(rng, 0.35),
      capabilities: { add: chance(rng, 0.08) ? ['NET_ADMIN'] : [], drop: chance(rng, 0.5) ? ['ALL'] : [] },
    },
    resources: { limits: chance(rng, 0.7) ? { cpu: pick(rng, ['250m', '500m', '1']), memory: pick(rng, ['256Mi', '512Mi', '1Gi']) } : null },
    ports: [{ containerPort: pick(rng, [8080, 3000, 9090] as const), protocol: 'TCP' }],
  });
  switch (core.kind.resource) {
    case 'Pod':
      return { apiVersion: 'v1', kind: 'Pod', metadata, spec: { serviceAccountName: chance(rng, 0.3) ? 'default' : core.app, hostNetwork: chance(rng, 0.03), containers: [container()], nodeName: nodeName(rng, core) }, status: { phase: chance(rng, 0.95) ? 'Running' : 'Pending', restartCount: int(rng, 0, 30) } };
    case 'Deployment':
    case 'DaemonSet':
      return { apiVersion: 'apps/v1', kind: core.kind.resource, metadata, spec: { replicas: core.kind.resource === 'Deployment' ? int(rng, 1, 12) : null, template: { spec: { containers: [container()] } } } };
    case 'Service':
      return { apiVersion: 'v1', kind: 'Service', metadata, spec: { type: pick(rng, ['ClusterIP', 'ClusterIP', 'LoadBalancer', 'NodePort'] as const), ports: [{ port: 80, targetPort: 8080, protocol: 'TCP' }], clusterIP: privateIp(rng) } };
    case 'Namespace':
      return { apiVersion: 'v1', kind: 'Namespace', metadata, status: { phase: 'Active' }, podSecurity: { enforce: pick(rng, ['privileged', 'baseline', 'restricted', null] as const) } };
    default:
      return { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata, roleRef: { kind: 'ClusterRole', name: chance(rng, 0.3) ? 'cluster-admin' : 'view' }, subjects: [{ kind: pick(rng, ['Group', 'ServiceAccount', 'User'] as const), name: pick(rng, ['system:authenticated', 'ci-deployer', 'ops@corp']) }] };
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Vulnerabilities: a pool of advisories per package ecosystem (built once per seed), drawn from per asset.

type FindingSeverity = 'CRITICAL' | 'HIGH' | 'MEDIUM' | 'LOW' | 'INFORMATIONAL' | 'UNKNOWN';

interface Advisory {
  vulnerabilityId: string;
  ecosystem: Ecosystem;
  pkg: PackageSpec;
  installedVersion: string;
  /** '' when no fix exists; undefined when the scanner reports no fixedVersion at all. */
  fixedVersion: string | undefined;
  severityLevel: FindingSeverity;
  severitySource: string;
  title: string;
  description: string;
  publishedMs: number;
  publishedDate: string;
  primaryUrl: string;
  cwes: readonly Record<string, string>[];
  hasKev: boolean;
  knownExploit: Record<string, string> | null;
  hasExploit: boolean;
  exploits: readonly Record<string, string>[];
  isExploitable: boolean;
}

type Pools = Readonly<Record<Ecosystem, readonly Advisory[]>>;

const pickSeverity = weightedPicker<FindingSeverity>([['CRITICAL', 7], ['HIGH', 25], ['MEDIUM', 40], ['LOW', 18], ['INFORMATIONAL', 3], ['UNKNOWN', 7]]);
/** Chance of being in the known-exploited catalogue by severity: about 3% of advisories overall. */
const KEV_RATE: Readonly<Record<FindingSeverity, number>> = { CRITICAL: 0.2, HIGH: 0.06, MEDIUM: 0.015, LOW: 0, INFORMATIONAL: 0, UNKNOWN: 0 };
const IMPACT: Readonly<Record<FindingSeverity, string>> = {
  CRITICAL: 'A remote, unauthenticated attacker could execute arbitrary code.',
  HIGH: 'An attacker could corrupt memory, leading to a crash or to code execution.',
  MEDIUM: 'Under specific conditions an attacker could cause a denial of service or read sensitive data.',
  LOW: 'The impact is limited to local users or unusual configurations.',
  INFORMATIONAL: 'This is a hardening issue without a direct security impact.',
  UNKNOWN: 'The impact has not been rated yet.',
};
const CWE_OBJECTS: ReadonlyMap<string, Record<string, string>> = new Map(CWES.map((c) => [c.id, {
  id: `CWE-${c.id}`, name: c.name, cweId: c.id, source: 'NVD', sourceUrl: `https://cwe.mitre.org/data/definitions/${c.id}.html`, description: c.description,
}]));
const cweObject = (id: string): Record<string, string> => {
  const cwe = CWE_OBJECTS.get(id);
  if (!cwe) throw new RangeError(`unknown CWE ${id} in the catalog`);
  return cwe;
};

function buildPools(s: Settings): Pools {
  const rng = createRng(s.seed, 'advisories');
  const used = new Set<string>();
  // Large enough that an asset's findings are distinct advisories and a single one stays rare across the inventory.
  const size = Math.max(400, Math.ceil(s.findingsPerAsset * 12));
  const pools = {} as Record<Ecosystem, Advisory[]>;
  for (const ecosystem of ECOSYSTEMS) {
    const pool: Advisory[] = [];
    for (const famous of FAMOUS_CVES) {
      if (famous.ecosystem !== ecosystem || Date.parse(famous.published) >= s.now) continue;
      used.add(famous.id);
      pool.push(famousAdvisory(rng, famous));
    }
    while (pool.length < size) pool.push(syntheticAdvisory(s, rng, ecosystem, used));
    pools[ecosystem] = pool;
  }
  return pools;
}

function famousAdvisory(rng: Rng, famous: (typeof FAMOUS_CVES)[number]): Advisory {
  const spec = PACKAGES[famous.ecosystem].find((p) => p.name === famous.packageName);
  if (!spec) throw new RangeError(`package ${famous.packageName} of ${famous.id} is not in the catalog`);
  const [installedVersion, fixedVersion] = at(spec.versions, 0);
  const publishedMs = Date.parse(`${famous.published}T00:00:00.000Z`) + int(rng, 0, 20) * HOUR;
  const knownExploit = famous.kev ? {
    cveID: famous.id,
    notes: `https://nvd.nist.gov/vuln/detail/${famous.id}`,
    product: famous.kev.product,
    vendorProject: famous.kev.vendorProject,
    requiredAction: 'Apply mitigations per vendor instructions or discontinue use of the product if mitigations are unavailable.',
    shortDescription: famous.title,
    vulnerabilityName: famous.kev.vulnerabilityName,
    dueDate: famous.kev.dueDate,
    dateAdded: famous.kev.dateAdded,
  } : null;
  const hasExploit = famous.kev !== null || chance(rng, 0.3);
  return {
    vulnerabilityId: famous.id, ecosystem: famous.ecosystem, pkg: spec, installedVersion, fixedVersion,
    severityLevel: famous.severity, severitySource: 'nvd', title: famous.title,
    description: `${famous.title}. ${IMPACT[famous.severity]} This issue is fixed in version ${fixedVersion}.`,
    publishedMs, publishedDate: isoTime(publishedMs), primaryUrl: `https://nvd.nist.gov/vuln/detail/${famous.id}`,
    cwes: [cweObject(famous.cwe)], hasKev: famous.kev !== null, knownExploit,
    hasExploit, exploits: hasExploit ? exploitsOf(rng, famous.id, famous.packageName, famous.title) : [],
    isExploitable: true,
  };
}

function syntheticAdvisory(s: Settings, rng: Rng, ecosystem: Ecosystem, used: Set<string>): Advisory {
  const publishedMs = s.now - int(rng, 20 * DAY, 8 * 365 * DAY);
  const year = new Date(publishedMs).getUTCFullYear();
  let vulnerabilityId: string;
  do vulnerabilityId = `CVE-${year}-${int(rng, 10000, 52999)}`;
  while (used.has(vulnerabilityId));
  used.add(vulnerabilityId);

  const severityLevel = pickSeverity(rng);
  const spec = pick(rng, PACKAGES[ecosystem]);
  const [installedVersion, fixed] = pick(rng, spec.versions);
  const fix = weighted(rng, [['fixed', 88], ['none', 9], ['absent', 3]] as const);
  const fixedVersion = fix === 'fixed' ? fixed : fix === 'none' ? '' : undefined;
  const cwe = pick(rng, CWES);
  const cwes = chance(rng, 0.15) ? [cweObject(cwe.id), cweObject(pick(rng, CWES.filter((c) => c.id !== cwe.id)).id)] : [cweObject(cwe.id)];
  const phrase = WEAKNESS_PHRASES[cwe.id] ?? 'vulnerability';
  const area = pick(rng, spec.areas);
  const title = `${spec.name}: ${phrase} in ${area}`;
  const description = `A ${phrase} flaw was found in ${spec.name} in ${area}. ${IMPACT[severityLevel]} ` +
    (fix === 'fixed' ? `This issue is fixed in version ${fixed}.` : 'No fixed version is available yet.');
  const severitySource = pick(rng, SEVERITY_SOURCES[ecosystem]);
  const primaryUrl = severitySource === 'ghsa'
    ? `https://github.com/advisories/GHSA-${alnum(rng, 4)}-${alnum(rng, 4)}-${alnum(rng, 4)}`
    : `https://avd.aquasec.com/nvd/${vulnerabilityId.toLowerCase()}`;

  const hasKev = chance(rng, KEV_RATE[severityLevel]);
  let knownExploit: Record<string, string> | null = null;
  if (hasKev) {
    const added = Math.min(s.now - DAY, publishedMs + int(rng, DAY, 90 * DAY));
    knownExploit = {
      cveID: vulnerabilityId,
      notes: `https://nvd.nist.gov/vuln/detail/${vulnerabilityId}`,
      product: spec.name,
      vendorProject: spec.vendor,
      requiredAction: 'Apply mitigations per vendor instructions or discontinue use of the product if mitigations are unavailable.',
      shortDescription: description,
      vulnerabilityName: `${spec.vendor} ${spec.name} ${phrase.replace(/\b\w/g, (ch) => ch.toUpperCase())} Vulnerability`,
      dueDate: isoDate(added + 21 * DAY),
      dateAdded: isoDate(added),
    };
  }
  const hasExploit = chance(rng, hasKev ? 0.7 : 0.09);
  return {
    vulnerabilityId, ecosystem, pkg: spec, installedVersion, fixedVersion, severityLevel, severitySource, title, description,
    publishedMs, publishedDate: isoTime(publishedMs), primaryUrl, cwes, hasKev, knownExploit, hasExploit,
    exploits: hasExploit ? exploitsOf(rng, vulnerabilityId, spec.name, title) : [],
    isExploitable: hasKev || chance(rng, 0.3),
  };
}

function exploitsOf(rng: Rng, cve: string, packageName: string, title: string): Record<string, string>[] {
  return sample(rng, EXPLOIT_SOURCES, int(rng, 1, 3)).map(([source, base]) => {
    switch (source) {
      case 'Exploit-DB': {
        const n = int(rng, 40000, 52500);
        return { id: `EDB-${n}`, title: `${packageName} - ${title.split(': ')[1] ?? 'exploit'}`, description: `Proof of concept for ${cve}.`, source, sourceUrl: `${base}${n}` };
      }
      case 'GitHub': {
        const repo = `${pick(rng, ['h4x0r-sec', 'offsec-lab', 'vulnresearch', 'cve-pocs', 'redteam-tools'])}/${cve.toLowerCase()}-poc`;
        return { id: `GH-${hex(rng, 8)}`, title: `${cve} proof of concept`, description: `Public proof-of-concept exploit for ${cve} in ${packageName}.`, source, sourceUrl: `${base}${repo}` };
      }
      case 'Metasploit': {
        const module = `exploit/multi/misc/${packageName.replace(/[^a-z0-9]/gi, '_').toLowerCase()}_${cve.slice(4).replace('-', '_')}`;
        return { id: module, title: `${packageName} ${cve} module`, description: `Metasploit module exploiting ${cve}.`, source, sourceUrl: `${base}${module}/` };
      }
      default: {
        const n = int(rng, 170000, 180000);
        return { id: `PS-${n}`, title: `${packageName} ${cve}`, description: `Exploit for ${cve} published on Packet Storm.`, source, sourceUrl: `${base}${n}` };
      }
    }
  });
}

const pickLocations = weightedPicker([[1, 70], [2, 20], [3, 10]] as const);
/** Share of assets whose scan found nothing although they have packages. */
const CLEAN_SHARE = 0.08;

/** The findings of one asset: distinct advisories from the ecosystems present on it. */
function findingsOf(s: Settings, pools: Pools, tenant: Tenant, asset: BuiltAsset): Record<string, unknown>[] {
  const { core, scan } = asset;
  if (scan.ecosystems.length === 0 || core.kind.findingsWeight === 0 || s.findingsPerAsset === 0) return [];
  const rng = createRng(s.seed, 'findings', tenant.index, core.index);
  if (chance(rng, CLEAN_SHARE)) return [];
  // Uniform between 0 and twice the asset's mean; the means average out to findingsPerAsset over the tenant's mix.
  const mean = (s.findingsPerAsset * core.kind.findingsWeight) / tenant.meanFindingsWeight / (1 - CLEAN_SHARE);
  const available = scan.ecosystems.reduce((sum, e) => sum + pools[e].length, 0);
  const count = Math.min(Math.floor(available / 2), stochasticRound(rng, mean * 2 * rng()));
  // The OS pool weighs a little more: base images carry most of a workload's vulnerable packages.
  const pickEcosystem = weightedPicker(scan.ecosystems.map((e, i) => [e, i === 0 && scan.os?.ecosystem === e ? 3 : 2] as const));
  const chosen = new Set<string>();
  const lastObservedAt = isoTime(asset.lastObservedMs);
  const executionId = String(asset.executionId);
  const out: Record<string, unknown>[] = [];
  for (let attempt = 0; out.length < count && attempt < count * 20; attempt++) {
    const ecosystem = pickEcosystem(rng);
    const advisory = pick(rng, pools[ecosystem]);
    if (chosen.has(advisory.vulnerabilityId)) continue;
    chosen.add(advisory.vulnerabilityId);
    const earliest = Math.min(asset.lastObservedMs, Math.max(asset.firstObservedMs, advisory.publishedMs));
    out.push({
      schemaVersion: asset.schemaVersion,
      assetId: core.id,
      organizationId: tenant.organizationId,
      tenantId: tenant.tenantId,
      integrationId: core.integrationId,
      vulnerabilityId: advisory.vulnerabilityId,
      provider: core.kind.provider,
      assetType: core.type,
      description: advisory.description,
      title: advisory.title,
      severityLevel: advisory.severityLevel,
      severitySource: advisory.severitySource,
      firstObservedAt: isoTime(dateBetween(rng, earliest, asset.lastObservedMs)),
      lastObservedAt,
      publishedDate: advisory.publishedDate,
      executionId,
      targetName: scan.targetName,
      primaryUrl: advisory.primaryUrl,
      packages: packagesOf(rng, advisory, scan, core),
      cwes: advisory.cwes,
      hasKev: advisory.hasKev,
      hasExploit: advisory.hasExploit,
      knownExploit: advisory.knownExploit,
      exploits: advisory.exploits,
      isExploitable: advisory.isExploitable,
    });
  }
  return out;
}

interface PackageEntry {
  packageName: string;
  targetName: string;
  targetType: string;
  targetPath: string;
  targetClass: string;
  fixedVersion?: string;
  installedVersion: string;
}

function packagesOf(rng: Rng, advisory: Advisory, scan: ScanProfile, core: AssetCore): PackageEntry[] {
  const locations = pickLocations(rng);
  const { pkg: spec, installedVersion, fixedVersion } = advisory;
  const entry = (packageName: string, targetName: string, targetType: string, targetPath: string, targetClass: string): PackageEntry =>
    fixedVersion === undefined
      ? { packageName, targetName, targetType, targetPath, targetClass, installedVersion }
      : { packageName, targetName, targetType, targetPath, targetClass, fixedVersion, installedVersion };
  const root = scan.appRoot;
  switch (advisory.ecosystem) {
    case 'deb':
    case 'apk': {
      // OS packages: the vulnerable source package and the binaries built from it.
      const path = advisory.ecosystem === 'deb' ? 'var/lib/dpkg/status' : 'lib/apk/db/installed';
      return [spec.name, ...spec.companions].slice(0, locations)
        .map((name) => entry(name, scan.osTarget, scan.os?.targetType ?? advisory.ecosystem, path, 'os-pkgs'));
    }
    case 'npm': {
      const parent = pick(rng, PACKAGES.npm).name;
      return [`${root}/node_modules/${spec.name}/package.json`, `${root}/node_modules/${parent}/node_modules/${spec.name}/package.json`,
        `${root}/packages/${core.component}/node_modules/${spec.name}/package.json`].slice(0, locations)
        .map((path) => entry(spec.name, LANGUAGE_TARGETS.npm, 'npm', path, 'lang-pkgs'));
    }
    case 'jar':
      return [`${root}/lib/${spec.name}-${installedVersion}.jar`, `${root}/BOOT-INF/lib/${spec.name}-${installedVersion}.jar`,
        `${root}/plugins/${core.component}/${spec.name}-${installedVersion}.jar`].slice(0, locations)
        .map((path) => entry(spec.name, LANGUAGE_TARGETS.jar, 'jar', path, 'lang-pkgs'));
    default:
      return [`usr/local/lib/python3.11/site-packages/${spec.name}-${installedVersion}.dist-info/METADATA`,
        `${root}/.venv/lib/python3.11/site-packages/${spec.name}-${installedVersion}.dist-info/METADATA`,
        `opt/venv/lib/python3.12/site-packages/${spec.name}-${installedVersion}.dist-info/METADATA`].slice(0, locations)
        .map((path) => entry(spec.name, LANGUAGE_TARGETS['python-pkg'], 'python-pkg', path, 'lang-pkgs'));
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Asset groups, exemptions, risks: they point at assets by recomputing them, never by remembering them.

interface Group {
  assetGroupId: string;
  name: string;
  /** Indexes of member assets (at most MAX_GROUP_MEMBERS). */
  members: readonly number[];
}

const PCI_APPS: ReadonlySet<string> = new Set(['payments', 'checkout', 'billing', 'ledger', 'fraud']);
const capitalize = (word: string): string => word.charAt(0).toUpperCase() + word.slice(1);

function buildGroups(s: Settings, tenant: Tenant): Group[] {
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
    templates.push({ name: 'Kubernetes workloads', test: (c) => c.kind.provider === 'Kubernetes' && COMPUTE.has(c.kind.category) });
  }
  return shuffle(rng, templates).slice(0, int(rng, 3, 5)).map((template) => {
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
  const seen = [...counts].filter(([, n]) => n >= Math.max(2, sampleSize * 0.02)).sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : 1));
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
function buildExemptions(s: Settings, pools: Pools, tenant: Tenant, groups: readonly Group[]): Record<string, unknown>[] {
  const rng = createRng(s.seed, 'exemptions', tenant.index);
  const probes = [0, 1, 2, 3].map(() => findProbe(s, pools, tenant, indexesFrom(int(rng, 0, Math.max(0, s.assets - 1)), s.assets)));
  const fallback = (): string => pick(rng, pools.deb).vulnerabilityId;
  const vulnOf = (probe: Probe | null, n: number): string => (probe ? at(probe.vulnerabilityIds, n % probe.vulnerabilityIds.length) : fallback());
  const assetIdsOf = (...list: (Probe | null)[]): string[] => list.flatMap((p) => (p ? [p.asset.core.id] : []));
  const [p0 = null, p1 = null, p2 = null, p3 = null] = probes;

  const group = groups.find((g) => g.members.length > 0) ?? groups[0];
  const groupProbe = group ? findProbe(s, pools, tenant, group.members) : null;
  const region = uncommonRegion(s, tenant, rng) ?? p2?.asset.core.region ?? at(REGIONS.AWS, 0);
  const otherRegion = p3?.asset.core.region ?? region;

  const definitions: { name: string; reason: string; rules: Record<string, unknown>[] }[] = [
    {
      name: 'Base image CVEs awaiting upstream rebuild', reason: 'ACCEPTED_RISK',
      rules: [
        rule({ exemptionType: 'ACCEPTED_RISK', vulnerabilityId: vulnOf(p0, 0) }),
        rule({ exemptionType: 'ACCEPTED_RISK', vulnerabilityIds: [...new Set([vulnOf(p1, 0), vulnOf(p1, 1), vulnOf(p2, 1)])] }),
      ],
    },
    {
      name: 'Hosts being decommissioned', reason: 'COMPENSATING_CONTROL',
      rules: [
        rule({ exemptionType: 'DECOMMISSIONING', assetTags: [{ key: DECOMMISSION_TAG.key, value: DECOMMISSION_TAG.value }] }),
        rule({ exemptionType: 'DECOMMISSIONING', assetIds: assetIdsOf(p1, p3) }),
      ],
    },
    {
      name: `No vendor fix available in ${region}`, reason: 'NO_FIX_AVAILABLE',
      rules: [
        rule({ exemptionType: 'NO_FIX_AVAILABLE', assetRegions: [region], noVendorFix: true }),
        rule({ exemptionType: 'FALSE_POSITIVE', assetGroupIds: group ? [group.assetGroupId] : [], vulnerabilityIds: [vulnOf(groupProbe, 0)] }),
      ],
    },
    {
      name: 'Temporary exception during platform migration', reason: 'TEMPORARY',
      rules: [rule({ exemptionType: 'TEMPORARY', assetIds: assetIdsOf(p2), vulnerabilityId: vulnOf(p2, 0) })],
    },
    {
      name: `Scanner false positives in ${otherRegion}`, reason: 'FALSE_POSITIVE',
      rules: [rule({ exemptionType: 'FALSE_POSITIVE', assetRegions: [otherRegion], vulnerabilityIds: [vulnOf(p3, 0), vulnOf(p0, 1)] })],
    },
  ];
  return definitions.slice(0, int(rng, 3, 5)).map((d) => {
    const createdMs = s.now - int(rng, 2 * DAY, 180 * DAY);
    return {
      tenantId: tenant.tenantId,
      organizationId: tenant.organizationId,
      exemptionId: uuid(rng),
      exemption: { name: d.name, reason: d.reason, createdAt: isoTime(createdMs), updatedAt: isoTime(dateBetween(rng, createdMs, s.now - HOUR)), rules: d.rules },
    };
  });
}

const pickRiskSeverity = weightedPicker([['CRITICAL', 8], ['HIGH', 25], ['MEDIUM', 45], ['LOW', 22]] as const);
const SCORE_RANGE: Readonly<Record<'CRITICAL' | 'HIGH' | 'MEDIUM' | 'LOW', readonly [number, number]>> = {
  CRITICAL: [9, 10], HIGH: [7, 8.9], MEDIUM: [4, 6.9], LOW: [0.5, 3.9],
};

function buildRisk(s: Settings, tenant: Tenant, index: number): Record<string, unknown> {
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
    resolutions: type.resolutions.map(([key, title], i) => ({ key, type: i === 0 ? 'REMEDIATION' : 'MITIGATION', title })),
    score,
    likelihood: near(score),
    impact: near(score),
    severityLevel,
    factors: type.factors.slice(0, int(rng, 1, type.factors.length)).map((key) => ({
      key,
      meta: factorMeta(rng, key, core),
      title: FACTOR_TITLES[key] ?? key,
      value: round(float(rng, 0.2, 1), 2),
      verificationState: weighted(rng, [['VERIFIED', 60], ['UNVERIFIED', 25], ['INFERRED', 15]] as const),
      description: `${FACTOR_TITLES[key] ?? key} on ${core.name}.`,
    })),
    meta: { assetName: core.name, resourceType: core.type, fullResourceName: core.fullResourceName },
    discoveredAt: isoTime(s.now - int(rng, HOUR, 700 * DAY)),
    lifecycleState: weighted(rng, [['OPEN', 85], ['DISMISSED_ACCEPTED', 10], ['DISMISSED_NOT_A_RISK', 5]] as const),
  };
}

function factorMeta(rng: Rng, key: string, core: AssetCore): Record<string, unknown> {
  switch (key) {
    case 'internet-exposure':
    case 'management-port':
      return { ports: key === 'management-port' ? [pick(rng, [22, 3389] as const)] : [443], sourceCidr: '0.0.0.0/0', path: [`igw-0${hex(rng, 8)}`, `sg-0${hex(rng, 8)}`] };
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

// ---------------------------------------------------------------------------------------------------------------
// Output

/** One NDJSON line per record, without the newline, tenant by tenant in dependency order (see the file header). */
export function* generateRecords(opts: GenerateOptions): Generator<string> {
  const s = settingsOf(opts);
  const pools = buildPools(s);
  for (let t = 0; t < s.tenants; t++) {
    const tenant = buildTenant(s, t);
    yield line('tenant', { tenantId: tenant.tenantId, organizationId: tenant.organizationId, name: tenant.name });
    for (const env of tenant.environments) {
      yield line('environment', {
        tenantId: tenant.tenantId, organizationId: tenant.organizationId, environmentId: env.environmentId, name: env.name, isProduction: env.isProduction,
      });
    }
    for (const integration of tenant.integrations) yield line('integration', integration.record);
    for (let i = 0; i < s.assets; i++) {
      const asset = buildAsset(s, tenant, assetCore(s, tenant, i));
      yield line('asset', asset.record);
      for (const finding of findingsOf(s, pools, tenant, asset)) yield line('vulnerability', finding);
    }
    const groups = buildGroups(s, tenant);
    for (const group of groups) {
      yield line('assetGroup', {
        tenantId: tenant.tenantId, organizationId: tenant.organizationId, assetGroupId: group.assetGroupId, name: group.name,
        assetIds: group.members.map((i) => assetCore(s, tenant, i).id),
      });
    }
    for (const exemption of buildExemptions(s, pools, tenant, groups)) yield line('exemption', exemption);
    for (let r = 0; r < s.risks; r++) yield line('risk', buildRisk(s, tenant, r));
  }
}

/** Bytes gathered before a write: large writes are far cheaper than one per line. */
const CHUNK_SIZE = 64 * 1024;

/**
 * Writes every record line (with `\n`) to `out`, waiting for 'drain' when the stream asks for it, so memory stays flat
 * however slow the consumer is. The stream is left open: the caller owns it (it may be stdout).
 */
export async function writeInventory(opts: GenerateOptions, out: NodeJS.WritableStream): Promise<{ records: number }> {
  let records = 0;
  let chunk = '';
  const flush = async (): Promise<void> => {
    const text = chunk;
    chunk = '';
    if (!out.write(text)) await once(out, 'drain');
  };
  for (const record of generateRecords(opts)) {
    chunk += `${record}\n`;
    records++;
    if (chunk.length >= CHUNK_SIZE) await flush();
  }
  if (chunk.length > 0) await flush();
  return { records };
}
