// The provider's own description of a resource (an asset's rawData), as a scanner would store it.
import { REGIONS, type OsRelease } from './catalog.js';
import { alnum, chance, hex, int, isoTime, pick, sample, uuid, type Rng } from './random.js';
import { DAY, MINUTE } from './settings.js';
import { clusterFlavour } from './tenants.js';
import { type AssetCore } from './identity.js';

interface RawFacts {
  exposed: boolean;
  os: OsRelease | null;
  createdMs: number;
  imageId: string | null;
  tags: readonly { Key: string; Value: string }[];
  operationalState: string | null;
}

const privateIp = (rng: Rng): string => `10.${int(rng, 0, 63)}.${int(rng, 0, 255)}.${int(rng, 4, 254)}`;
const publicIp = (rng: Rng): string =>
  `${pick(rng, [3, 18, 34, 35, 52, 54, 20, 40] as const)}.${int(rng, 0, 255)}.${int(rng, 0, 255)}.${int(rng, 1, 254)}`;

/**
 * The provider's own description of the resource, as a scanner would store it: nested objects, arrays, numbers,
 * booleans and nulls, so the `metadata` filter has realistic material to search.
 */
export function rawDataOf(rng: Rng, core: AssetCore, f: RawFacts): Record<string, unknown> {
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
      return provider === 'AWS'
        ? {
            InstanceId: core.resourceId,
            InstanceType: pick(rng, ['t3.medium', 'm6i.large', 'm6i.xlarge', 'c6g.2xlarge', 'r6i.large', 't3.micro']),
            ImageId: f.imageId,
            State: {
              Code: f.operationalState === 'inactive' ? 80 : 16,
              Name: f.operationalState === 'inactive' ? 'stopped' : 'running',
            },
            Placement: { AvailabilityZone: core.detail.zone ?? null, Tenancy: 'default', GroupName: '' },
            PrivateIpAddress: privateIp(rng),
            PublicIpAddress: f.exposed ? publicIp(rng) : null,
            IamInstanceProfile: chance(rng, 0.7)
              ? { Arn: `arn:aws:iam::${core.integration.accountNumber}:instance-profile/${core.app}-${core.component}` }
              : null,
            SecurityGroups: [{ GroupId: `sg-0${hex(rng, 16)}`, GroupName: `${core.app}-${core.component}-sg` }],
            MetadataOptions: {
              HttpTokens: chance(rng, 0.7) ? 'required' : 'optional',
              HttpPutResponseHopLimit: pick(rng, [1, 2] as const),
              HttpEndpoint: 'enabled',
            },
            BlockDeviceMappings: [
              {
                DeviceName: '/dev/xvda',
                Ebs: {
                  VolumeId: `vol-0${hex(rng, 16)}`,
                  DeleteOnTermination: true,
                  Encrypted: chance(rng, 0.8),
                  VolumeSize: pick(rng, [8, 20, 50, 100] as const),
                },
              },
            ],
            Monitoring: { State: chance(rng, 0.3) ? 'enabled' : 'disabled' },
            EbsOptimized: chance(rng, 0.6),
            Tags: f.tags.map((t) => ({ Key: t.Key, Value: t.Value })),
          }
        : {
            name: core.resourceName,
            vmSize:
              provider === 'Azure'
                ? pick(rng, ['Standard_B2s', 'Standard_D4s_v5', 'Standard_E8s_v5'])
                : pick(rng, ['e2-medium', 'n2-standard-4', 'c3-standard-8']),
            osProfile: {
              computerName: core.resourceName,
              adminUsername: pick(rng, ['azureuser', 'ops', 'admin']),
              linuxConfiguration:
                f.os?.platform === 'linux'
                  ? { disablePasswordAuthentication: chance(rng, 0.85), sshKeys: int(rng, 1, 3) }
                  : null,
            },
            networkInterfaces: [
              {
                privateIp: privateIp(rng),
                publicIp: f.exposed ? publicIp(rng) : null,
                acceleratedNetworking: chance(rng, 0.5),
              },
            ],
            disks: [
              {
                sizeGb: pick(rng, [30, 64, 128, 256] as const),
                encryption: pick(rng, ['platform-managed', 'customer-managed'] as const),
                type: 'Premium_LRS',
              },
            ],
            shieldedVm:
              provider === 'GCP' ? { secureBoot: chance(rng, 0.4), vtpm: true, integrityMonitoring: true } : null,
            labels: Object.fromEntries(f.tags.map((t) => [t.Key.toLowerCase(), t.Value])),
          };
    case 'bucket':
      return {
        name: core.resourceName,
        versioning: { status: chance(rng, 0.6) ? 'Enabled' : 'Suspended', mfaDelete: chance(rng, 0.05) },
        encryption: {
          rules: [{ algorithm: chance(rng, 0.7) ? 'AES256' : 'aws:kms', bucketKeyEnabled: chance(rng, 0.5) }],
        },
        publicAccessBlock: f.exposed
          ? null
          : { blockPublicAcls: true, ignorePublicAcls: true, blockPublicPolicy: true, restrictPublicBuckets: true },
        logging: chance(rng, 0.4)
          ? { targetBucket: `${core.app}-access-logs`, targetPrefix: `${core.resourceName}/` }
          : null,
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
        environment: {
          variables: {
            NODE_ENV: core.envTag === 'prod' ? 'production' : core.envTag,
            LOG_LEVEL: pick(rng, ['info', 'debug', 'warn']),
            TABLE_NAME: `${core.app}-${core.envTag}`,
          },
        },
        tracingConfig: { mode: chance(rng, 0.45) ? 'Active' : 'PassThrough' },
        layers: chance(rng, 0.3)
          ? [
              {
                arn: `arn:aws:lambda:${core.region}:${int(rng, 100_000_000_000, 999_999_999_999)}:layer:observability:${int(rng, 10, 60)}`,
                codeSize: int(rng, 100_000, 9_000_000),
              },
            ]
          : [],
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
        containerDefinitions: [
          {
            name: core.component,
            image: core.image,
            essential: true,
            privileged: chance(rng, 0.05),
            readonlyRootFilesystem: chance(rng, 0.3),
            portMappings: [{ containerPort: pick(rng, [80, 3000, 8080, 8443] as const), protocol: 'tcp' }],
            environment: [
              { name: 'SERVICE_NAME', value: `${core.app}-${core.component}` },
              { name: 'OTEL_ENABLED', value: String(chance(rng, 0.5)) },
            ],
            logConfiguration: {
              logDriver: 'awslogs',
              options: { 'awslogs-group': `/ecs/${core.resourceName}`, 'awslogs-region': core.region },
            },
          },
        ],
        taskRoleArn: chance(rng, 0.8)
          ? `arn:aws:iam::${core.integration.accountNumber}:role/${core.app}-${core.component}-task-role`
          : null,
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
        endpoint: {
          address: `${core.resourceName}.${hex(rng, 12)}.${core.region}.rds.amazonaws.com`,
          port: pick(rng, [5432, 3306, 1433] as const),
        },
        deletionProtection: chance(rng, 0.6),
      };
    case 'identity':
      return {
        name: core.resourceName,
        path: '/',
        maxSessionDuration: pick(rng, [3600, 7200, 43200] as const),
        lastUsed: chance(rng, 0.8)
          ? { date: isoTime(f.createdMs + int(rng, DAY, 200 * DAY)), region: pick(rng, REGIONS.AWS) }
          : null,
        attachedPolicies: sample(
          rng,
          [
            'AdministratorAccess',
            'ReadOnlyAccess',
            'AmazonS3FullAccess',
            'CloudWatchAgentServerPolicy',
            `${core.app}-app-policy`,
          ],
          int(rng, 1, 3),
        ).map((name) => ({ name, managed: !name.startsWith(core.app) })),
        permissionsBoundary: chance(rng, 0.2)
          ? { type: 'Policy', arn: `arn:aws:iam::${core.integration.accountNumber}:policy/boundary` }
          : null,
      };
    case 'network':
      return {
        groupName: core.resourceName,
        description: `Security group for ${core.app} ${core.component}`,
        vpcId: `vpc-0${hex(rng, 16)}`,
        ingress: [
          { protocol: 'tcp', fromPort: 443, toPort: 443, cidrs: [f.exposed ? '0.0.0.0/0' : '10.0.0.0/8'] },
          ...(f.exposed && chance(rng, 0.5)
            ? [{ protocol: 'tcp', fromPort: 22, toPort: 22, cidrs: ['0.0.0.0/0'] }]
            : []),
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
        nodeGroups: Array.from({ length: int(rng, 1, 3) }, (_, i) => ({
          name: `ng-${i + 1}`,
          instanceType: pick(rng, ['m6i.large', 'm6g.xlarge', 'c6i.2xlarge']),
          desiredSize: int(rng, 1, 12),
        })),
      };
  }
}

/** A node name in the style of the cluster's managed offering. */
function nodeName(rng: Rng, core: AssetCore): string {
  const cluster = core.integration.cluster;
  switch (cluster ? clusterFlavour(cluster.region) : 'eks') {
    case 'aks':
      return `aks-nodepool1-${int(rng, 10_000_000, 99_999_999)}-vmss0000${int(rng, 0, 9)}${alnum(rng, 1)}`;
    case 'gke':
      return `gke-${cluster?.name ?? 'cluster'}-default-pool-${hex(rng, 8)}-${alnum(rng, 4)}`;
    default:
      return `ip-${privateIp(rng).replace(/\./g, '-')}.${core.region}.compute.internal`;
  }
}

function kubernetesObject(rng: Rng, core: AssetCore, createdMs: number): Record<string, unknown> {
  const namespace = core.detail.namespace ?? 'default';
  const metadata = {
    name: core.resourceName,
    namespace: core.kind.resource === 'Namespace' || core.kind.resource === 'ClusterRoleBinding' ? null : namespace,
    uid: uuid(rng),
    labels: { 'app.kubernetes.io/name': `${core.app}-${core.component}`, 'app.kubernetes.io/part-of': core.app },
    annotations: chance(rng, 0.4)
      ? { 'kubectl.kubernetes.io/restartedAt': isoTime(createdMs + int(rng, MINUTE, DAY)) }
      : {},
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
    resources: {
      limits: chance(rng, 0.7)
        ? { cpu: pick(rng, ['250m', '500m', '1']), memory: pick(rng, ['256Mi', '512Mi', '1Gi']) }
        : null,
    },
    ports: [{ containerPort: pick(rng, [8080, 3000, 9090] as const), protocol: 'TCP' }],
  });
  switch (core.kind.resource) {
    case 'Pod':
      return {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata,
        spec: {
          serviceAccountName: chance(rng, 0.3) ? 'default' : core.app,
          hostNetwork: chance(rng, 0.03),
          containers: [container()],
          nodeName: nodeName(rng, core),
        },
        status: { phase: chance(rng, 0.95) ? 'Running' : 'Pending', restartCount: int(rng, 0, 30) },
      };
    case 'Deployment':
    case 'DaemonSet':
      return {
        apiVersion: 'apps/v1',
        kind: core.kind.resource,
        metadata,
        spec: {
          replicas: core.kind.resource === 'Deployment' ? int(rng, 1, 12) : null,
          template: { spec: { containers: [container()] } },
        },
      };
    case 'Service':
      return {
        apiVersion: 'v1',
        kind: 'Service',
        metadata,
        spec: {
          type: pick(rng, ['ClusterIP', 'ClusterIP', 'LoadBalancer', 'NodePort'] as const),
          ports: [{ port: 80, targetPort: 8080, protocol: 'TCP' }],
          clusterIP: privateIp(rng),
        },
      };
    case 'Namespace':
      return {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata,
        status: { phase: 'Active' },
        podSecurity: { enforce: pick(rng, ['privileged', 'baseline', 'restricted', null] as const) },
      };
    default:
      return {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata,
        roleRef: { kind: 'ClusterRole', name: chance(rng, 0.3) ? 'cluster-admin' : 'view' },
        subjects: [
          {
            kind: pick(rng, ['Group', 'ServiceAccount', 'User'] as const),
            name: pick(rng, ['system:authenticated', 'ci-deployer', 'ops@corp']),
          },
        ],
      };
  }
}
