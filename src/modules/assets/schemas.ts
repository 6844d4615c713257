import { Type, type Static } from 'typebox';
import {
  Bool, FreeObject, KeyValueTag, Nullable, NullableInteger, NullableNumber, NullableString, NullableTimestamp,
  StringEnum, Timestamp, providers, riskSeverities,
} from '../../domain/schema.js';
import { defineQuery } from '../../http/query.js';
import { EXAMPLE_ORGANIZATION, EXAMPLE_TENANT, queryExamples, ref } from '../../http/docs.js';

const OperatingSystem = Type.Object({
  architecture: NullableString(), name: NullableString(), platform: NullableString(), version: NullableString(),
  versionId: NullableNumber(), activeKernel: NullableString(), buildNumber: NullableString(), lcuVersion: NullableString(),
});

const ResourceTag = Type.Object({ Key: NullableString(), Value: Nullable(Type.Union([Type.String(), Type.Boolean()])) });

export const operationalStates = ['active', 'inactive'] as const;

/** The asset as the API returns it (without `rawData`, which only the get operation adds on request). */
export const Asset = Type.Object({
  schemaVersion: NullableString('Date-like schema version label'),
  id: Type.String({ description: 'Asset resource name' }),
  organizationId: Type.String({ format: 'uuid' }),
  tenantId: Type.String({ format: 'uuid' }),
  integrationId: NullableString(),
  executionId: NullableInteger('Integration execution id (millisecond-epoch-like integer)'),
  provider: StringEnum(providers),
  type: Type.String({ description: 'Provider resource type, `Provider::Service::Type`' }),
  name: NullableString(),
  createdAt: NullableTimestamp(),
  firstObservedAt: Timestamp(),
  lastObservedAt: Timestamp(),
  updatedAt: NullableTimestamp(),
  tags: Type.Array(KeyValueTag),
  isPubliclyExposed: Bool(),
  isVulnerable: Bool('Derived: any non-exempted vulnerability finding'),
  numberOfLowVulnerabilities: Type.Integer({ description: 'Derived' }),
  numberOfMediumVulnerabilities: Type.Integer({ description: 'Derived' }),
  numberOfHighVulnerabilities: Type.Integer({ description: 'Derived' }),
  numberOfCriticalVulnerabilities: Type.Integer({ description: 'Derived' }),
  vulnerabilityScore: Type.Number({ description: 'Derived, 0 to 10 (see docs/DESIGN.md)' }),
  hasKev: Bool('Derived'),
  hasExploit: Bool('Derived'),
  isExploitable: Bool('Derived'),
  isInVpc: Bool(),
  lastScanId: NullableNumber(),
  lastScannedAt: NullableTimestamp(),
  imageId: NullableString(),
  platform: NullableString(),
  hasAdminPrivileges: Bool(),
  hasOverlyPermissivePrivileges: Bool(),
  hasAuthorizer: Bool(),
  hasTracingEnabled: Bool(),
  policy: Nullable(FreeObject()),
  numberOfLowSecrets: Type.Integer({ description: 'Length of lowSecrets' }),
  numberOfMediumSecrets: Type.Integer({ description: 'Length of mediumSecrets' }),
  numberOfHighSecrets: Type.Integer({ description: 'Length of highSecrets' }),
  numberOfCriticalSecrets: Type.Integer({ description: 'Length of criticalSecrets' }),
  lowSecrets: Type.Array(FreeObject()),
  mediumSecrets: Type.Array(FreeObject()),
  highSecrets: Type.Array(FreeObject()),
  criticalSecrets: Type.Array(FreeObject()),
  operatingSystem: Type.Array(OperatingSystem),
  riskScore: NullableNumber('0 to 10'),
  operationalState: Nullable(StringEnum(operationalStates)),
  region: NullableString(),
  service: NullableString('`Provider::Service`'),
  resourceId: NullableString(),
  resourceName: NullableString(),
  resourceTags: Type.Array(ResourceTag),
  resourceType: NullableString(),
  fullResourceName: NullableString(),
  providerAccountId: NullableNumber(),
  resourceURL: NullableString(),
  isSusceptibleToPrivilegeEscalation: Bool('Imported attribute (absent means false)'),
});
export type Asset = Static<typeof Asset>;

/** Fields the service computes (decisions §7); imported values are ignored. */
export const derivedAssetFields = [
  'isVulnerable', 'numberOfLowVulnerabilities', 'numberOfMediumVulnerabilities', 'numberOfHighVulnerabilities',
  'numberOfCriticalVulnerabilities', 'vulnerabilityScore', 'hasKev', 'hasExploit', 'isExploitable',
] as const;

export const AssetWithRawData = Type.Intersect([Asset, Type.Object({ rawData: FreeObject() })]);

export const sortableAssetFields = [
  'id', 'executionId', 'integrationId', 'resourceType', 'service', 'region', 'name', 'provider', 'firstObservedAt',
  'lastObservedAt', 'riskScore', 'vulnerabilityScore', 'numberOfLowVulnerabilities', 'numberOfMediumVulnerabilities',
  'numberOfHighVulnerabilities', 'numberOfCriticalVulnerabilities',
] as const;
export type AssetSortField = (typeof sortableAssetFields)[number];

const bool = (description: string) => ({ kind: 'boolean', description }) as const;
const strings = (description: string) => ({ kind: 'list', item: { type: 'string' }, description }) as const;

export const listAssetsQuery = defineQuery(
  {
    ids: strings('Asset ids (resource names), matched exactly and case-sensitively.'),
    executionIds: { kind: 'list', item: { type: 'integer' }, description: 'Integration execution ids; each item must be an integer.' },
    regions: strings('Provider regions (`region`), matched exactly and case-sensitively.'),
    integrationIds: strings('Integration ids (`integrationId`), matched exactly.'),
    assetGroupIds: strings('Asset group ids: assets that are members of any listed group (an unknown group matches nothing).'),
    environmentIds: { kind: 'list', item: { type: 'environment' }, description: 'Environments of the asset\'s integration: environment UUIDs (any letter case) and/or the names production, non-production (every environment flagged production / not production).' },
    severityLevels: { kind: 'list', item: { type: 'enum', values: riskSeverities }, description: 'Assets with at least one counted vulnerability of a listed severity.' },
    secretsLevels: { kind: 'list', item: { type: 'enum', values: riskSeverities }, description: 'Assets with at least one exposed secret of a listed severity.' },
    resourceTypes: strings('Provider resource types (matches resourceType).'),
    providers: { kind: 'list', item: { type: 'enum', values: providers }, description: 'The asset\'s provider.' },
    services: strings('`Provider::Service` (exact) or a bare service name (any provider); case-insensitive.'),
    firstObservedAtStart: { kind: 'datetime', description: 'Inclusive start of the firstObservedAt range.' },
    firstObservedAtEnd: { kind: 'datetime', description: 'Inclusive end of the firstObservedAt range.' },
    hasAdminPrivileges: bool('Assets whose hasAdminPrivileges is this value.'),
    hasOverlyPermissivePrivileges: bool('Assets whose hasOverlyPermissivePrivileges is this value.'),
    isSusceptibleToPrivilegeEscalation: bool('Assets whose imported isSusceptibleToPrivilegeEscalation attribute (absent means false) is this value.'),
    hasKev: bool('Assets with (true) or without (false) a non-exempted finding in the known exploited vulnerabilities catalog.'),
    hasExploit: bool('Assets with (true) or without (false) a non-exempted finding referenced in a public exploit database.'),
    isExploitable: bool('Assets with (true) or without (false) a non-exempted exploitable finding.'),
    isPubliclyExposed: bool('Assets whose isPubliclyExposed is this value.'),
    isVulnerable: bool('Assets with (true) or without (false) any non-exempted finding.'),
    query: { kind: 'string', description: 'Case-insensitive substring of the asset name.' },
    metadata: { kind: 'string', description: 'Case-insensitive substring of any key, or of any string, number or boolean value, anywhere inside the asset\'s raw data.' },
    riskScoreGte: { kind: 'decimal', min: 0, max: 10, description: 'Minimum riskScore (inclusive): a decimal number from 0 to 10, digits with an optional fraction (`7` or `7.5`).' },
    operationalStates: { kind: 'list', item: { type: 'enum', values: operationalStates }, description: 'Operational states; only assets of resource types that support one (AWS::EC2::Instance) match.' },
    sortBy: { kind: 'enum', values: sortableAssetFields, description: 'Sort key (default: id). Ties break by id in the same direction; nulls last.' },
    sortOrder: { kind: 'enum', values: ['ASC', 'DESC'], description: 'Requires sortBy. Default ASC.' },
    page: { kind: 'integer', min: 1, max: 1_000_000, default: 1, description: 'Page number, an integer from 1 to 1000000 (default 1). A page past the end answers an empty `data` with the true `total`.' },
    perPage: { kind: 'integer', min: 1, max: 1000, default: 100, description: 'Page size, an integer from 1 to 1000 (default 100).' },
  },
  { ranges: [['firstObservedAtStart', 'firstObservedAtEnd']], requires: [['sortOrder', 'sortBy']] },
);
export type ListAssetsQuery = ReturnType<typeof listAssetsQuery.parse>;

export const getAssetQuery = defineQuery({
  include: { kind: 'list', item: { type: 'enum', values: ['rawData'] }, description: 'rawData adds the asset\'s raw data (`rawData`, `{}` when none was imported).' },
});
export type GetAssetQuery = ReturnType<typeof getAssetQuery.parse>;

export const PageMeta = Type.Object({
  page: Type.Integer({ description: 'The page number of this response' }),
  perPage: Type.Integer({ description: 'The page size of this response' }),
  total: Type.Integer({ description: 'How many records match the filters, over all pages' }),
  hasNextPage: Type.Boolean({ description: 'Whether a later page has records' }),
  hasPreviousPage: Type.Boolean({ description: 'Whether this is not the first page' }),
}, { description: 'Position of a numbered page in the list' });

// ---- OpenAPI documentation of the asset operations (see src/http/docs.ts) ----

/** The path parameter of GET /v1/tenant/assets/{assetId}, for the document (the route itself is a wildcard). */
export const AssetIdParams = Type.Object({
  assetId: Type.String({
    minLength: 1,
    description: 'The asset id, its resource name (for example `sirn:assets:<uuid>:aws:ec2:instance:us-east-2:i-07b1e1016f9ae97f0`). '
      + 'Ids contain `:` and may contain `/` (ARN-like resource ids). Send it percent-encoded (`:` as `%3A`, `/` as `%2F`), '
      + 'or raw: both are accepted, and the raw form may keep its `/`. An empty id is `404`.',
    examples: ['sirn:assets:4f10d8f8-7ac2-44e9-abd3-e1482e23fdff:aws:ec2:instance:us-east-2:i-07b1e1016f9ae97f0'],
  }),
});

export const ListAssetsResponse = Type.Object({
  data: Type.Array(ref('Asset'), { description: 'The assets of this page' }),
  meta: ref('PageMeta'),
});

export const GetAssetResponse = Type.Object({
  data: Type.Intersect([
    ref('Asset'),
    Type.Object({ rawData: Type.Optional(FreeObject('The asset\'s raw data as imported (`{}` when none was). Only with `include=rawData`.')) }),
  ], { description: 'The asset; with `include=rawData` it also carries `rawData`' }),
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
  tags: [{ Key: 'Environment', Value: 'prod' }, { Key: 'Team', Value: 'sre' }],
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
  operatingSystem: [{
    architecture: 'x86_64', name: 'Ubuntu', platform: 'linux', version: '22.04', versionId: 22.04,
    activeKernel: '5.15.0-1051-aws', buildNumber: null, lcuVersion: null,
  }],
  riskScore: 8.2,
  operationalState: 'active',
  region: 'us-east-2',
  service: 'AWS::EC2',
  resourceId: 'i-07b1e1016f9ae97f0',
  resourceName: 'checkout-cron-prod-12',
  resourceTags: [{ Key: 'Environment', Value: 'prod' }, { Key: 'backup', Value: true }],
  resourceType: 'AWS::EC2::Instance',
  fullResourceName: 'arn:aws:ec2:us-east-2:866483505163:instance/i-07b1e1016f9ae97f0',
  providerAccountId: 866483505163,
  resourceURL: 'https://us-east-2.console.aws.amazon.com/ec2/home?region=us-east-2#InstanceDetails:instanceId=i-07b1e1016f9ae97f0',
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
      configuration: { InstanceId: 'i-07b1e1016f9ae97f0', InstanceType: 't3.medium', State: { Code: 16, Name: 'running' } },
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
