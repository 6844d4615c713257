// Resource names per provider (ids, names, full resource names, console URLs, container images), as each cloud spells
// them, for asset identities (identity.ts).
import { BUCKET_PURPOSES, REGIONS, type AssetKind, type Provider } from './catalog.js';
import { alnum, chance, hex, int, pick, type Rng } from './random.js';
import { type Integration } from './tenants.js';

export const typeOf = (k: AssetKind): string => `${k.provider}::${k.service}::${k.resource}`;

export interface NamingContext {
  slug: string;
  envTag: string;
  app: string;
  component: string;
  region: string;
  integration: Integration;
}

export interface ResourceNames {
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
export function containerImage(rng: Rng, provider: Provider, c: NamingContext): string {
  const repo = `${c.app}-${c.component}`;
  const registry = provider === 'Kubernetes' ? pick(rng, ['AWS', 'Azure', 'GCP', 'public'] as const) : provider;
  switch (registry) {
    case 'AWS':
      return `${c.integration.accountNumber}.dkr.ecr.${pick(rng, REGIONS.AWS)}.amazonaws.com/${repo}:${semver(rng)}`;
    case 'Azure':
      return `${c.slug}acr.azurecr.io/${c.app}/${c.component}:${semver(rng)}`;
    case 'GCP':
      return `${pick(rng, REGIONS.GCP)}-docker.pkg.dev/${c.slug}-artifacts/${c.app}/${c.component}:${semver(rng)}`;
    default:
      return pick(rng, [
        'docker.io/library/nginx:1.25.4',
        'docker.io/bitnami/redis:7.2.4',
        'ghcr.io/external-secrets/external-secrets:v0.9.13',
        'quay.io/prometheus/node-exporter:v1.7.0',
        'docker.io/grafana/grafana:10.4.1',
        'registry.k8s.io/ingress-nginx/controller:v1.10.0',
      ]);
  }
}

export function resourceNames(kind: AssetKind, rng: Rng, c: NamingContext): ResourceNames {
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
      return {
        ...base,
        resourceId: instanceId,
        resourceName: name,
        name,
        detail: { zone: `${region}${pick(rng, ['a', 'b', 'c'])}` },
        ...aws('ec2', `instance/${instanceId}`, `ec2/home?region=${region}#InstanceDetails:instanceId=${instanceId}`),
      };
    }
    case 'AWS::S3::Bucket': {
      const bucket = `${slug}-${app}-${pick(rng, BUCKET_PURPOSES)}-${env}-${hex(rng, 6)}`;
      return {
        ...base,
        resourceId: bucket,
        resourceName: bucket,
        name: bucket,
        ...aws('s3', bucket, `s3/buckets/${bucket}?region=${region}`),
      };
    }
    case 'AWS::Lambda::Function': {
      const fn = `${app}-${component}-${env}-${alnum(rng, 6)}`;
      return {
        ...base,
        resourceId: `function/${fn}`,
        resourceName: fn,
        name: fn,
        ...aws('lambda', `function:${fn}`, `lambda/home?region=${region}#/functions/${fn}`),
      };
    }
    case 'AWS::ECS::TaskDefinition': {
      const family = `${app}-${component}`;
      const revision = int(rng, 1, 180);
      return {
        resourceId: `task-definition/${family}:${revision}`,
        resourceName: family,
        name: `${family}:${revision}`,
        image: containerImage(rng, 'AWS', c),
        detail: { revision },
        ...aws(
          'ecs',
          `task-definition/${family}:${revision}`,
          `ecs/v2/task-definitions/${family}/${revision}?region=${region}`,
        ),
      };
    }
    case 'AWS::RDS::DBInstance': {
      const db = `${app}-${env}-${pick(rng, ['postgres', 'mysql', 'aurora'] as const)}-${int(rng, 1, 9)}`;
      return {
        ...base,
        resourceId: `db/${db}`,
        resourceName: db,
        name: db,
        ...aws('rds', `db:${db}`, `rds/home?region=${region}#database:id=${db}`),
      };
    }
    case 'AWS::IAM::Role': {
      const role = chance(rng, 0.15)
        ? pick(rng, [
            'OrganizationAccountAccessRole',
            'github-actions-deploy',
            'terraform-ci',
            'AWSServiceRoleForECS',
            'break-glass-admin',
          ])
        : `${app}-${component}-${env}-role`;
      return {
        ...base,
        resourceId: `role/${role}`,
        resourceName: role,
        name: role,
        ...aws('iam', `role/${role}`, `iam/home#/roles/details/${role}`),
      };
    }
    case 'AWS::EC2::SecurityGroup': {
      const sg = `sg-0${hex(rng, 16)}`;
      const name = `${app}-${component}-${env}-sg`;
      return {
        ...base,
        resourceId: sg,
        resourceName: name,
        name,
        ...aws('ec2', `security-group/${sg}`, `ec2/home?region=${region}#SecurityGroup:groupId=${sg}`),
      };
    }
    case 'AWS::DynamoDB::Table': {
      const table = `${app}-${pick(rng, ['events', 'sessions', 'state', 'idempotency', 'jobs'])}-${env}`;
      return {
        ...base,
        resourceId: `table/${table}`,
        resourceName: table,
        name: table,
        ...aws('dynamodb', `table/${table}`, `dynamodbv2/home?region=${region}#table?name=${table}`),
      };
    }
    case 'AWS::EKS::Cluster': {
      const cluster = `${env}-${app}-eks-${int(rng, 1, 3)}`;
      return {
        ...base,
        resourceId: `cluster/${cluster}`,
        resourceName: cluster,
        name: cluster,
        ...aws('eks', `cluster/${cluster}`, `eks/home?region=${region}#/clusters/${cluster}`),
      };
    }
  }
  if (kind.provider === 'Azure') return azureNames(kind, rng, c);
  if (kind.provider === 'GCP') return gcpNames(kind, rng, c);
  return kubernetesNames(kind, rng, c);
}

const AZURE_PROVIDERS: Readonly<Record<string, string>> = {
  VirtualMachine: 'Microsoft.Compute/virtualMachines',
  StorageAccount: 'Microsoft.Storage/storageAccounts',
  Site: 'Microsoft.Web/sites',
  Server: 'Microsoft.Sql/servers',
  NetworkSecurityGroup: 'Microsoft.Network/networkSecurityGroups',
  Vault: 'Microsoft.KeyVault/vaults',
};

function azureNames(kind: AssetKind, rng: Rng, c: NamingContext): ResourceNames {
  const { slug, envTag: env, app, component } = c;
  const name =
    {
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
    resourceId,
    resourceName: name,
    name,
    fullResourceName: resourceId,
    resourceURL: `https://portal.azure.com/#@${slug}.onmicrosoft.com/resource${resourceId}/overview`,
    image: kind.resource === 'Site' && chance(rng, 0.3) ? containerImage(rng, 'Azure', c) : null,
    detail: {},
  };
}

function gcpNames(kind: AssetKind, rng: Rng, c: NamingContext): ResourceNames {
  const { envTag: env, app, component, region } = c;
  const project = c.integration.gcpProjectId ?? 'unknown-project';
  const names = (
    resourceId: string,
    api: string,
    resourceName: string,
    url: string,
    extra: Partial<ResourceNames> = {},
  ): ResourceNames => ({
    resourceId,
    resourceName,
    name: resourceName,
    fullResourceName: `//${api}.googleapis.com/${resourceId}`,
    resourceURL: `https://console.cloud.google.com/${url}`,
    image: null,
    detail: {},
    ...extra,
  });
  switch (kind.resource) {
    case 'Instance': {
      if (kind.service === 'SQL') {
        const db = `${app}-${env}-pg-${int(rng, 1, 5)}`;
        return names(
          `projects/${project}/instances/${db}`,
          'sqladmin',
          db,
          `sql/instances/${db}/overview?project=${project}`,
        );
      }
      const zone = `${region}-${pick(rng, ['a', 'b', 'c'])}`;
      const vm = `${app}-${component}-${env}-${alnum(rng, 4)}`;
      return names(
        `projects/${project}/zones/${zone}/instances/${vm}`,
        'compute',
        vm,
        `compute/instancesDetail/zones/${zone}/instances/${vm}?project=${project}`,
        { detail: { zone } },
      );
    }
    case 'Bucket': {
      const bucket = `${project}-${pick(rng, BUCKET_PURPOSES)}-${hex(rng, 4)}`;
      return names(`projects/_/buckets/${bucket}`, 'storage', bucket, `storage/browser/${bucket}?project=${project}`);
    }
    case 'Service': {
      const svc = `${app}-${component}`;
      return names(
        `projects/${project}/locations/${region}/services/${svc}`,
        'run',
        svc,
        `run/detail/${region}/${svc}/metrics?project=${project}`,
        { image: containerImage(rng, 'GCP', c) },
      );
    }
    case 'Function': {
      const fn = `${app}-${component}-${pick(rng, ['handler', 'trigger', 'sync', 'export'])}`;
      return names(
        `projects/${project}/locations/${region}/functions/${fn}`,
        'cloudfunctions',
        fn,
        `functions/details/${region}/${fn}?project=${project}`,
      );
    }
    default: {
      const email = `${app}-${component}@${project}.iam.gserviceaccount.com`;
      return names(
        `projects/${project}/serviceAccounts/${email}`,
        'iam',
        email,
        `iam-admin/serviceaccounts?project=${project}`,
      );
    }
  }
}

const DAEMONSETS: readonly string[] = [
  'fluent-bit',
  'node-exporter',
  'datadog-agent',
  'kube-proxy',
  'aws-node',
  'calico-node',
  'falco',
];
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
      name = chance(rng, 0.3)
        ? pick(rng, ['cluster-admin-ci', 'ops-admins', 'argocd-application-controller'])
        : `${workload}-reader`;
      resourceId = `clusterrolebindings/${name}`;
  }
  return {
    resourceId,
    resourceName: name,
    name,
    fullResourceName: `k8s://${cluster}/${resourceId}`,
    resourceURL: null,
    image,
    detail: { namespace, cluster },
  };
}
