// The full asset record: scan profile, exposure and privileges, tags, secrets and policy.
import { OPERATIONAL_STATE_TYPES } from '../domain/enums.js';
import {
  CONTAINER_RELEASES,
  SCHEMA_VERSIONS,
  SECRET_TYPES,
  TEAMS,
  VM_RELEASES,
  type Category,
  type Ecosystem,
  type OsRelease,
  type Provider,
} from './catalog.js';
import {
  alnum,
  at,
  chance,
  createRng,
  dateBetween,
  float,
  hex,
  int,
  isoTime,
  pick,
  round,
  sample,
  weighted,
  weightedPicker,
  type Rng,
} from './random.js';
import { DAY, HISTORY, MINUTE, type Settings } from './settings.js';
import { type Tenant } from './tenants.js';
import { type AssetCore } from './identity.js';
import { rawDataOf } from './raw-data.js';

/** What the findings of an asset need to know about it. */
export interface ScanProfile {
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

export interface BuiltAsset {
  core: AssetCore;
  record: Record<string, unknown>;
  schemaVersion: string;
  executionId: number;
  firstObservedMs: number;
  lastObservedMs: number;
  scan: ScanProfile;
}

export const COMPUTE: ReadonlySet<Category> = new Set(['vm', 'task', 'pod', 'workload', 'function']);
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

export function buildAsset(s: Settings, tenant: Tenant, core: AssetCore): BuiltAsset {
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
  const languages =
    kind.languages.length === 0 || (category === 'vm' && os?.ecosystem && chance(rng, 0.5))
      ? []
      : sample(rng, kind.languages, chance(rng, 0.75) ? 1 : 2);
  const ecosystems = os?.ecosystem ? [os.ecosystem, ...languages] : languages;
  const [isPubliclyExposed, isInVpc, admin, permissive, escalation] = EXPOSURE[category];
  const exposed = chance(rng, isPubliclyExposed);
  const hasAdminPrivileges = chance(rng, admin);

  const imageId =
    category === 'vm' ? machineImage(rng, kind.provider, os) : core.image ? `sha256:${hex(rng, 64)}` : null;
  const platform =
    category === 'vm'
      ? os?.platform === 'windows'
        ? 'Windows'
        : 'Linux/UNIX'
      : core.image
        ? pick(rng, ['linux/amd64', 'linux/amd64', 'linux/arm64'] as const)
        : null;
  const osTarget = `${core.image ?? core.name} (${os?.targetType ?? 'unknown'} ${os?.version ?? ''})`;
  const targetName =
    kind.resource === 'TaskDefinition'
      ? `${core.resourceName}:${core.detail.revision ?? 1} > ${core.image ?? ''}`
      : (core.image ?? core.name);

  const operationalState = OPERATIONAL_STATE_TYPES.includes(core.type)
    ? chance(rng, 0.85)
      ? 'active'
      : 'inactive'
    : category === 'vm' && chance(rng, 0.05)
      ? pick(rng, ['active', 'inactive'] as const)
      : null;
  const riskScore = chance(rng, 0.08)
    ? null
    : round(
        Math.min(
          10,
          float(rng, 0, 5.5) + (exposed ? 2.5 : 0) + (hasAdminPrivileges ? 1.5 : 0) + (ecosystems.length > 0 ? 0.5 : 0),
        ),
        1,
      );

  const secrets =
    COMPUTE.has(category) && chance(rng, 0.15) ? secretsOf(rng, core) : { low: [], medium: [], high: [], critical: [] };
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
    core,
    record,
    schemaVersion,
    executionId: execution,
    firstObservedMs,
    lastObservedMs,
    scan: { os, ecosystems, osTarget, targetName, appRoot: appRootOf(core, languages) },
  };
}

function machineImage(rng: Rng, provider: Provider, os: OsRelease | null): string {
  const windows = os?.platform === 'windows';
  switch (provider) {
    case 'AWS':
      return `ami-0${hex(rng, 16)}`;
    case 'Azure':
      return windows
        ? 'MicrosoftWindowsServer:WindowsServer:2022-datacenter-azure-edition:latest'
        : os?.targetType === 'debian'
          ? 'Debian:debian-12:12-gen2:latest'
          : 'Canonical:0001-com-ubuntu-server-jammy:22_04-lts-gen2:latest';
    default:
      return windows
        ? 'projects/windows-cloud/global/images/windows-server-2022-dc-v20240313'
        : os?.targetType === 'debian'
          ? 'projects/debian-cloud/global/images/debian-12-bookworm-v20240312'
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
export const DECOMMISSION_TAG = { key: 'lifecycle', value: 'decommissioning' } as const;

function tagsOf(rng: Rng, tenant: Tenant, core: AssetCore): { Key: string; Value: string }[] {
  const tags: { Key: string; Value: string }[] = [];
  // Kubernetes objects carry labels, not cloud tags; their normalised tags are fewer.
  const cloud = core.kind.provider !== 'Kubernetes';
  if (chance(rng, 0.92)) tags.push({ Key: 'Environment', Value: core.envTag });
  if (chance(rng, 0.8)) tags.push({ Key: 'Application', Value: core.app });
  if (chance(rng, 0.7)) tags.push({ Key: 'Team', Value: pick(rng, TEAMS) });
  if (cloud && chance(rng, 0.5)) tags.push({ Key: 'Owner', Value: `${pick(rng, TEAMS)}@${tenant.slug}.example.com` });
  if (cloud && chance(rng, 0.45)) tags.push({ Key: 'CostCenter', Value: `cc-${int(rng, 1000, 1099)}` });
  if (chance(rng, 0.6))
    tags.push({
      Key: 'ManagedBy',
      Value: cloud ? pick(rng, ['terraform', 'terraform', 'cloudformation', 'pulumi'] as const) : 'helm',
    });
  if (core.kind.category === 'bucket' || core.kind.category === 'database') {
    tags.push({
      Key: 'DataClassification',
      Value: pick(rng, ['confidential', 'internal', 'internal', 'public'] as const),
    });
  }
  if (chance(rng, 0.05) && ['payments', 'checkout', 'billing', 'ledger'].includes(core.app))
    tags.push({ Key: 'Compliance', Value: 'pci-dss' });
  if (chance(rng, 0.015)) tags.push({ Key: DECOMMISSION_TAG.key, Value: DECOMMISSION_TAG.value });
  return tags;
}

function resourceTagsOf(
  rng: Rng,
  core: AssetCore,
  tags: readonly { Key: string; Value: string }[],
): { Key: string; Value: string | boolean }[] {
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
      if (core.kind.provider === 'AWS' && chance(rng, 0.3))
        out.push({ Key: 'aws:cloudformation:stack-name', Value: `${core.app}-${core.envTag}` });
  }
  if (chance(rng, 0.3)) out.push({ Key: 'backup', Value: chance(rng, 0.7) });
  if (chance(rng, 0.1)) out.push({ Key: 'auto-shutdown', Value: true });
  return out;
}

type Secret = { type: string; path: string; line: number; sha: string };

function secretsOf(rng: Rng, core: AssetCore): { low: Secret[]; medium: Secret[]; high: Secret[]; critical: Secret[] } {
  const out = { low: [] as Secret[], medium: [] as Secret[], high: [] as Secret[], critical: [] as Secret[] };
  const count = weighted(rng, [
    [1, 60],
    [2, 25],
    [3, 10],
    [5, 5],
  ] as const);
  for (let i = 0; i < count; i++) {
    const [type, paths] = pick(rng, SECRET_TYPES);
    const path =
      core.kind.category === 'function'
        ? `/var/task/${pick(rng, ['.env', 'config.json', 'settings.py'])}`
        : pick(rng, paths);
    const secret = { type, path, line: int(rng, 1, 240), sha: hex(rng, 64) };
    const level =
      type === 'private-key' || type === 'aws-access-key-id'
        ? chance(rng, 0.6)
          ? 'critical'
          : 'high'
        : weighted(rng, [
            ['high', 30],
            ['medium', 45],
            ['low', 25],
          ] as const);
    out[level].push(secret);
  }
  return out;
}

function policyOf(rng: Rng, core: AssetCore, admin: boolean, exposed: boolean): Record<string, unknown> | null {
  const { category, provider } = core.kind;
  if (provider !== 'AWS' && provider !== 'GCP') return null;
  if (category === 'identity') {
    if (provider === 'GCP') {
      return {
        bindings: [
          {
            role: admin
              ? 'roles/owner'
              : pick(rng, ['roles/storage.objectViewer', 'roles/pubsub.publisher', 'roles/cloudsql.client']),
            members: [`serviceAccount:${core.name}`],
          },
        ],
        etag: `BwX${alnum(rng, 8)}`,
        version: 1,
      };
    }
    return {
      Version: '2012-10-17',
      Statement: [
        admin
          ? { Sid: 'AdminAccess', Effect: 'Allow', Action: '*', Resource: '*' }
          : {
              Sid: 'AppAccess',
              Effect: 'Allow',
              Action: sample(
                rng,
                [
                  's3:GetObject',
                  's3:PutObject',
                  'sqs:SendMessage',
                  'dynamodb:Query',
                  'kms:Decrypt',
                  'secretsmanager:GetSecretValue',
                ],
                int(rng, 1, 4),
              ),
              Resource: [`arn:aws:s3:::${core.app}-*`],
            },
        {
          Sid: 'AssumeFromService',
          Effect: 'Allow',
          Principal: { Service: pick(rng, ['ec2.amazonaws.com', 'ecs-tasks.amazonaws.com', 'lambda.amazonaws.com']) },
          Action: 'sts:AssumeRole',
          Condition: null,
        },
      ],
    };
  }
  if (category === 'bucket' && chance(rng, 0.6)) {
    return {
      Version: '2012-10-17',
      Statement: [
        {
          Sid: exposed ? 'PublicRead' : 'DenyInsecureTransport',
          Effect: exposed ? 'Allow' : 'Deny',
          Principal: '*',
          Action: exposed ? 's3:GetObject' : 's3:*',
          Resource: [`arn:aws:s3:::${core.resourceName}/*`],
          Condition: exposed ? null : { Bool: { 'aws:SecureTransport': 'false' } },
        },
      ],
    };
  }
  if (category === 'function' && chance(rng, 0.3)) {
    return {
      Version: '2012-10-17',
      Id: 'default',
      Statement: [
        {
          Sid: `apigw-${hex(rng, 8)}`,
          Effect: 'Allow',
          Principal: { Service: 'apigateway.amazonaws.com' },
          Action: 'lambda:InvokeFunction',
          Resource: core.fullResourceName,
        },
      ],
    };
  }
  return null;
}
