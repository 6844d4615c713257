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
  const baseName = at(TENANT_NAMES, (index + int(rng, 0, TENANT_NAMES.length - 1)) % TENANT_NAMES.length);
  // Past the list, names repeat with a number so each tenant stays recognisable.
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
    ? { name: `${envTag}-${pick(rng, ['eks', 'aks', 'gke'] as const)}-${clusterRegion.replace(/[^a-z0-9]/g, '').slice(0, 8)}-${ordinal}`, region: clusterRegion }
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
