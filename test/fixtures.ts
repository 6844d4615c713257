// A small hand-made inventory whose every value is chosen to exercise one filter, sort or rule; tests assert exact ids.
import { v5 as uuidv5 } from 'uuid';
import {
  assetRecord,
  findingRecord,
  ORG_A,
  ORG_B,
  riskRecord,
  TENANT_A,
  TENANT_B,
  type ImportRecord,
} from './records.js';

export const ENV_PROD = 'E0000000-0000-4000-8000-00000000000A';
export const ENV_DEV = 'e0000000-0000-4000-8000-00000000000b';
export const ENV_MISSING = 'e0000000-0000-4000-8000-0000000000ff';
export const INT_PROD = '10000000-0000-4000-8000-000000000001';
export const INT_DEV = '10000000-0000-4000-8000-000000000002';
export const INT_NO_ENV = '10000000-0000-4000-8000-000000000003';
export const INT_MISSING_ENV = '10000000-0000-4000-8000-000000000004';
export const INT_UNKNOWN = '10000000-0000-4000-8000-0000000000ff';

export const A1 = 'sirn:assets:u1:aws:ec2:instance:us-east-1:i-001';
export const A2 = 'sirn:assets:u2:aws:lambda:function:eu-west-1:function/payments-api';
export const A3 = 'sirn:assets:u3:aws:ec2:instance:us-east-1:i-003';
export const A4 = 'sirn:assets:u4:azure:compute:virtualmachine:westeurope:vm-4';
export const A5 = 'sirn:assets:u5:gcp:storage:bucket:us-central1:logs';
export const A6 = 'sirn:assets:u6:kubernetes:core:pod:us-east-1:ns/pod-6';
export const ALL_A = [A1, A2, A3, A4, A5, A6];
/** A fixed UUID for a test record the API types as UUID-identified; ids sort as their `n` does. */
export const uuidOf = (n: number): string => `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;
/** A fixed UUID named by a label, for tests that tell records apart by name. */
export const uuidFor = (label: string): string => uuidv5(label, uuidv5.URL);
export const GROUP_1 = 'a0000000-0000-4000-8000-000000000001';
export const GROUP_2 = 'a0000000-0000-4000-8000-000000000002';

const asset = assetRecord;
/** A finding of tenant A observed as the fixture's are: first in May 2024, last in June. */
export const fixtureFinding = (
  assetId: string,
  vulnerabilityId: string,
  severityLevel: string,
  fields: Record<string, unknown> = {},
): ImportRecord =>
  findingRecord(assetId, vulnerabilityId, severityLevel, {
    firstObservedAt: '2024-05-01T00:00:00Z',
    lastObservedAt: '2024-06-01T00:00:00Z',
    ...fields,
  });
const finding = fixtureFinding;

export const fixture: ImportRecord[] = [
  ['tenant', { tenantId: TENANT_A, organizationId: ORG_A, name: 'Tenant A' }],
  ['tenant', { tenantId: TENANT_B, organizationId: ORG_B, name: 'Tenant B' }],
  ['environment', { tenantId: TENANT_A, environmentId: ENV_PROD, name: 'production', isProduction: true }],
  ['environment', { tenantId: TENANT_A, environmentId: ENV_DEV, name: 'dev', isProduction: false }],
  [
    'integration',
    { tenantId: TENANT_A, integrationId: INT_PROD, name: 'aws prod', environmentId: ENV_PROD, provider: 'AWS' },
  ],
  [
    'integration',
    { tenantId: TENANT_A, integrationId: INT_DEV, name: 'aws dev', environmentId: ENV_DEV, provider: 'AWS' },
  ],
  ['integration', { tenantId: TENANT_A, integrationId: INT_NO_ENV, name: 'no env', environmentId: null }],
  [
    'integration',
    { tenantId: TENANT_A, integrationId: INT_MISSING_ENV, name: 'missing env', environmentId: ENV_MISSING },
  ],
  asset(A1, {
    provider: 'AWS',
    type: 'AWS::EC2::Instance',
    service: 'AWS::EC2',
    resourceType: 'AWS::EC2::Instance',
    region: 'us-east-1',
    integrationId: INT_PROD,
    executionId: 1700000000001,
    name: 'web-prod-1',
    firstObservedAt: '2024-01-10T00:00:00Z',
    lastObservedAt: '2024-06-01T00:00:00Z',
    riskScore: 7.5,
    operationalState: 'active',
    isPubliclyExposed: true,
    hasAdminPrivileges: true,
    tags: [{ Key: 'env', Value: 'prod' }],
    rawData: { Instance: { State: 'Running', Ports: [22, 443], Monitoring: false, Note: null }, Owner: 'Team-Alpha' },
    criticalSecrets: [{ type: 'aws-key' }],
  }),
  asset(A2, {
    provider: 'AWS',
    type: 'AWS::Lambda::Function',
    service: 'AWS::Lambda',
    resourceType: 'AWS::Lambda::Function',
    region: 'eu-west-1',
    integrationId: INT_DEV,
    executionId: 1700000000002,
    name: 'payments-api',
    firstObservedAt: '2024-02-01T00:00:00Z',
    lastObservedAt: '2024-06-02T00:00:00Z',
    riskScore: 3,
    operationalState: 'active',
    hasOverlyPermissivePrivileges: true,
    isSusceptibleToPrivilegeEscalation: true,
    rawData: { runtime: 'nodejs20.x', memory: 1024 },
    highSecrets: [{ type: 'password' }, { type: 'token' }],
  }),
  asset(A3, {
    provider: 'AWS',
    type: 'AWS::EC2::Instance',
    service: 'AWS::EC2',
    resourceType: 'AWS::EC2::Instance',
    region: 'us-east-1',
    integrationId: INT_NO_ENV,
    executionId: 1700000000001,
    name: 'Web-Staging',
    firstObservedAt: '2024-03-01T00:00:00Z',
    lastObservedAt: '2024-06-01T00:00:00Z',
    riskScore: null,
    operationalState: 'inactive',
    rawData: {},
  }),
  asset(A4, {
    provider: 'Azure',
    type: 'Azure::Compute::VirtualMachine',
    service: 'Azure::Compute',
    resourceType: 'Azure::Compute::VirtualMachine',
    region: 'westeurope',
    integrationId: INT_UNKNOWN,
    name: 'db-vm',
    firstObservedAt: '2024-04-01T00:00:00+02:00',
    lastObservedAt: '2024-06-03T00:00:00Z',
    riskScore: 9.1,
    isPubliclyExposed: true,
    lowSecrets: [{ type: 'x' }],
  }),
  asset(A5, {
    provider: 'GCP',
    type: 'GCP::Storage::Bucket',
    service: 'GCP::Storage',
    resourceType: 'GCP::Storage::Bucket',
    region: 'us-central1',
    integrationId: INT_MISSING_ENV,
    executionId: 1700000000005,
    firstObservedAt: '2024-05-01T00:00:00Z',
    lastObservedAt: '2024-06-01T00:00:00Z',
    riskScore: 0,
    rawData: { labels: { team: 'data' }, versioning: true },
  }),
  asset(A6, {
    provider: 'Kubernetes',
    type: 'Kubernetes::Core::Pod',
    service: 'Kubernetes::Core',
    resourceType: 'Kubernetes::Core::Pod',
    name: 'api-pod',
    firstObservedAt: '2024-06-01T00:00:00Z',
    lastObservedAt: '2024-06-04T00:00:00Z',
    riskScore: 5,
  }),
  ['assetGroup', { tenantId: TENANT_A, assetGroupId: GROUP_1, name: 'web', assetIds: [A1, A3] }],
  [
    'assetGroup',
    { tenantId: TENANT_A, assetGroupId: GROUP_2, name: 'data', assetIds: [A5, 'sirn:assets:not-imported'] },
  ],
  finding(A1, 'CVE-2024-0001', 'CRITICAL', { hasKev: true }),
  finding(A1, 'CVE-2024-0002', 'HIGH', { hasExploit: true }),
  finding(A1, 'CVE-2024-0003', 'LOW', { isExploitable: true }),
  finding(A2, 'CVE-2024-0004', 'MEDIUM', { packages: [{ packageName: 'lodash', fixedVersion: '4.17.21' }] }),
  finding(A2, 'CVE-2024-0005', 'INFORMATIONAL'),
  finding(A4, 'CVE-2024-0006', 'HIGH'),
  finding(A4, 'CVE-2024-0007', 'HIGH'),
  finding(A6, 'CVE-2024-0008', 'UNKNOWN'),
  // Tenant B holds an asset with A1's id but other values, and one of its own.
  [
    'asset',
    {
      tenantId: TENANT_B,
      id: A1,
      provider: 'AWS',
      type: 'AWS::EC2::Instance',
      region: 'ap-south-1',
      name: 'tenant-b-web',
      firstObservedAt: '2023-01-01T00:00:00Z',
      lastObservedAt: '2023-02-01T00:00:00Z',
      rawData: { secret: 'only-b' },
    },
  ],
  [
    'asset',
    {
      tenantId: TENANT_B,
      id: 'sirn:assets:b-only',
      provider: 'GCP',
      type: 'GCP::Compute::Instance',
      region: 'us-east-1',
      name: 'b-only',
      firstObservedAt: '2023-01-01T00:00:00Z',
      lastObservedAt: '2023-02-01T00:00:00Z',
    },
  ],
  [
    'vulnerability',
    {
      tenantId: TENANT_B,
      assetId: A1,
      vulnerabilityId: 'CVE-2024-9999',
      severityLevel: 'CRITICAL',
      firstObservedAt: '2023-01-01',
      lastObservedAt: '2023-01-02',
    },
  ],
];

export const R1 = 'risk-01';
export const R2 = 'risk-02';
export const R3 = 'risk-03';
export const R4 = 'risk-04';
export const R5 = 'risk-05';
export const R6 = 'risk-06';
export const MISSING_ASSET = 'sirn:assets:not-in-inventory';

const risk = riskRecord;

/** Risks of tenant A (and one of tenant B with a shared id), with ties on discoveredAt and score for the tie-break. */
export const riskFixture: ImportRecord[] = [
  risk(R1, {
    riskTypeId: 'public-exposure',
    integrationId: INT_PROD,
    primaryAssetId: A1,
    severityLevel: 'CRITICAL',
    lifecycleState: 'OPEN',
    meta: { assetName: 'web-prod-1', resourceType: 'AWS::EC2::Instance', fullResourceName: 'arn:aws:ec2:i-001' },
    discoveredAt: '2024-01-01T00:00:00Z',
    score: 9.5,
    region: 'us-east-1',
    description: 'Instance reachable from the internet',
    resolutions: [{ key: 'close-port', type: 'manual', title: 'Close port 22' }],
    factors: [
      {
        key: 'exposure',
        meta: { port: 22 },
        title: 'Open SSH',
        value: 0.9,
        verificationState: 'VERIFIED',
        description: 'x',
      },
    ],
    likelihood: 0.8,
    impact: 0.9,
  }),
  risk(R2, {
    riskTypeId: 'vulnerable-workload',
    integrationId: INT_DEV,
    primaryAssetId: A2,
    severityLevel: 'HIGH',
    lifecycleState: 'OPEN',
    meta: { assetName: 'payments-api', resourceType: 'AWS::Lambda::Function', fullResourceName: null },
    discoveredAt: '2024-02-01T00:00:00Z',
    score: 7,
  }),
  risk(R3, {
    riskTypeId: 'public-exposure',
    integrationId: INT_NO_ENV,
    primaryAssetId: MISSING_ASSET,
    severityLevel: 'MEDIUM',
    lifecycleState: 'DISMISSED_ACCEPTED',
    meta: { resourceType: 'AWS::EC2::Instance' },
    discoveredAt: '2024-02-01T00:00:00.000Z',
    score: 7,
  }),
  risk(R4, {
    riskTypeId: 'excessive-permissions',
    integrationId: INT_UNKNOWN,
    primaryAssetId: A4,
    severityLevel: 'low',
    lifecycleState: 'DISMISSED_NOT_A_RISK',
    meta: { resourceType: 'Azure::Compute::VirtualMachine' },
    discoveredAt: '2024-03-01T00:00:00Z',
    score: 2.5,
  }),
  risk(R5, {
    riskTypeId: 'excessive-permissions',
    severityLevel: 'HIGH',
    lifecycleState: 'OPEN',
    discoveredAt: '2024-04-01T00:00:00Z',
    score: 7,
  }),
  risk(R6, {
    riskTypeId: 'vulnerable-workload',
    integrationId: INT_PROD,
    primaryAssetId: A5,
    severityLevel: 'CRITICAL',
    lifecycleState: 'OPEN',
    meta: { resourceType: 'GCP::Storage::Bucket' },
    discoveredAt: '2024-05-01T12:00:00+02:00',
    score: 10,
  }),
  [
    'risk',
    {
      tenantId: TENANT_B,
      id: R1,
      riskTypeId: 'tenant-b-type',
      primaryAssetId: A1,
      severityLevel: 'LOW',
      lifecycleState: 'OPEN',
      discoveredAt: '2023-06-01T00:00:00Z',
      score: 1,
    },
  ],
];
