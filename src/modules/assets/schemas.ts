// HTTP side of the asset operations: the parsers of their queries, their response schemas and the examples of the
// OpenAPI document. The record and its query vocabulary live in src/domain/assets.ts.
import { Type } from 'typebox';
import { getAssetSpec, listAssetsSpec, type Asset } from '../../domain/assets.js';
import { FreeObject } from '../../domain/schema.js';
import { defineQuery } from '../../http/query.js';
import { EXAMPLE_ORGANIZATION, EXAMPLE_TENANT, queryExamples, ref } from '../../http/docs.js';

export type { GetAssetQuery, ListAssetsQuery } from '../../domain/assets.js';

export const listAssetsQuery = defineQuery(listAssetsSpec);
export const getAssetQuery = defineQuery(getAssetSpec);

export const PageMeta = Type.Object(
  {
    page: Type.Integer({ description: 'The page number of this response' }),
    perPage: Type.Integer({ description: 'The page size of this response' }),
    total: Type.Integer({ description: 'How many records match the filters, over all pages' }),
    hasNextPage: Type.Boolean({ description: 'Whether a later page has records' }),
    hasPreviousPage: Type.Boolean({ description: 'Whether this is not the first page' }),
  },
  { description: 'Position of a numbered page in the list' },
);

// ---- OpenAPI documentation of the asset operations (see src/http/docs.ts) ----

/** The path parameter of GET /v1/tenant/assets/{assetId}, for the document (the route itself is a wildcard). */
export const AssetIdParams = Type.Object({
  assetId: Type.String({
    minLength: 1,
    description:
      'The asset id, its resource name (for example `sirn:assets:<uuid>:aws:ec2:instance:us-east-2:i-07b1e1016f9ae97f0`). ' +
      'Ids contain `:` and may contain `/` (ARN-like resource ids). Send it percent-encoded (`:` as `%3A`, `/` as `%2F`), ' +
      'or raw: both are accepted, and the raw form may keep its `/`. An empty id is `404`.',
    examples: ['sirn:assets:4f10d8f8-7ac2-44e9-abd3-e1482e23fdff:aws:ec2:instance:us-east-2:i-07b1e1016f9ae97f0'],
  }),
});

export const ListAssetsResponse = Type.Object({
  data: Type.Array(ref('Asset'), { description: 'The assets of this page' }),
  meta: ref('PageMeta'),
});

export const GetAssetResponse = Type.Object({
  data: Type.Intersect(
    [
      ref('Asset'),
      Type.Object({
        rawData: Type.Optional(
          FreeObject("The asset's raw data as imported (`{}` when none was). Only with `include=rawData`."),
        ),
      }),
    ],
    { description: 'The asset; with `include=rawData` it also carries `rawData`' },
  ),
});

const TENANT = EXAMPLE_TENANT;
const ORGANIZATION = EXAMPLE_ORGANIZATION;

export const assetExample: Asset = {
  schemaVersion: '2024-06-01',
  id: 'sirn:assets:4f10d8f8-7ac2-44e9-abd3-e1482e23fdff:aws:ec2:instance:us-east-2:i-07b1e1016f9ae97f0',
  organizationId: ORGANIZATION,
  tenantId: TENANT,
  integrationId: '6850935f-d658-412c-bd99-804d7616d1d2',
  executionId: 1793419268459,
  provider: 'AWS',
  type: 'AWS::EC2::Instance',
  name: 'checkout-cron-prod-12',
  createdAt: '2025-08-01T08:48:47.860Z',
  firstObservedAt: '2025-08-03T03:21:26.029Z',
  lastObservedAt: '2026-10-31T04:40:03.527Z',
  updatedAt: '2026-01-21T14:33:38.639Z',
  tags: [
    { Key: 'Environment', Value: 'prod' },
    { Key: 'Team', Value: 'sre' },
  ],
  isPubliclyExposed: true,
  isVulnerable: true,
  numberOfLowVulnerabilities: 2,
  numberOfMediumVulnerabilities: 5,
  numberOfHighVulnerabilities: 1,
  numberOfCriticalVulnerabilities: 1,
  vulnerabilityScore: 7.9,
  hasKev: true,
  hasExploit: false,
  isExploitable: true,
  isInVpc: true,
  lastScanId: 5050001,
  lastScannedAt: '2026-10-31T04:40:03.527Z',
  imageId: 'ami-0517e65f4db18ca95',
  platform: 'Linux/UNIX',
  hasAdminPrivileges: false,
  hasOverlyPermissivePrivileges: true,
  hasAuthorizer: false,
  hasTracingEnabled: false,
  policy: null,
  numberOfLowSecrets: 0,
  numberOfMediumSecrets: 0,
  numberOfHighSecrets: 0,
  numberOfCriticalSecrets: 1,
  lowSecrets: [],
  mediumSecrets: [],
  highSecrets: [],
  criticalSecrets: [{ type: 'aws-access-key', path: '/etc/cron.d/checkout' }],
  operatingSystem: [
    {
      architecture: 'x86_64',
      name: 'Ubuntu',
      platform: 'linux',
      version: '22.04',
      versionId: 22.04,
      activeKernel: '5.15.0-1051-aws',
      buildNumber: null,
      lcuVersion: null,
    },
  ],
  riskScore: 8.2,
  operationalState: 'active',
  region: 'us-east-2',
  service: 'AWS::EC2',
  resourceId: 'i-07b1e1016f9ae97f0',
  resourceName: 'checkout-cron-prod-12',
  resourceTags: [
    { Key: 'Environment', Value: 'prod' },
    { Key: 'backup', Value: true },
  ],
  resourceType: 'AWS::EC2::Instance',
  fullResourceName: 'arn:aws:ec2:us-east-2:866483505163:instance/i-07b1e1016f9ae97f0',
  providerAccountId: 866483505163,
  resourceURL:
    'https://us-east-2.console.aws.amazon.com/ec2/home?region=us-east-2#InstanceDetails:instanceId=i-07b1e1016f9ae97f0',
  isSusceptibleToPrivilegeEscalation: false,
};

export const listAssetsExample = {
  data: [assetExample],
  meta: { page: 2, perPage: 1, total: 42, hasNextPage: true, hasPreviousPage: true },
};

export const getAssetExample = {
  data: {
    ...assetExample,
    rawData: {
      configuration: {
        InstanceId: 'i-07b1e1016f9ae97f0',
        InstanceType: 't3.medium',
        State: { Code: 16, Name: 'running' },
      },
      collected: { collector: 'aws-inventory', collectorVersion: '3.8.4' },
    },
  },
};

queryExamples(listAssetsQuery, {
  providers: 'AWS,GCP',
  severityLevels: 'CRITICAL,HIGH',
  services: 'AWS::EC2,Lambda',
  environmentIds: 'production',
  firstObservedAtStart: '2026-01-01',
  firstObservedAtEnd: '2026-03-31T23:59:59Z',
  isPubliclyExposed: 'true',
  query: 'payments',
  riskScoreGte: '7.5',
  operationalStates: 'active',
  sortBy: 'riskScore',
  sortOrder: 'DESC',
  page: '2',
  perPage: '50',
});
queryExamples(getAssetQuery, { include: 'rawData' });
