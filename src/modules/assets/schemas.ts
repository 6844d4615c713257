import { Type, type Static } from 'typebox';
import {
  Bool, FreeObject, KeyValueTag, Nullable, NullableInteger, NullableNumber, NullableString, NullableTimestamp,
  StringEnum, Timestamp, providers, riskSeverities,
} from '../../schemas/common.js';
import { defineQuery } from '../../http/query.js';

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
    ids: strings('Asset ids.'),
    executionIds: { kind: 'list', item: { type: 'integer' }, description: 'Integration execution ids (integers).' },
    regions: strings('Provider regions.'),
    integrationIds: strings('Integration ids.'),
    assetGroupIds: strings('Asset group ids (membership).'),
    environmentIds: { kind: 'list', item: { type: 'environment' }, description: 'Environment UUIDs and/or the names production, non-production.' },
    severityLevels: { kind: 'list', item: { type: 'enum', values: riskSeverities }, description: 'Assets with at least one counted vulnerability of a listed severity.' },
    secretsLevels: { kind: 'list', item: { type: 'enum', values: riskSeverities }, description: 'Assets with at least one exposed secret of a listed severity.' },
    resourceTypes: strings('Provider resource types (matches resourceType).'),
    providers: { kind: 'list', item: { type: 'enum', values: providers }, description: 'Providers.' },
    services: strings('`Provider::Service` (exact) or a bare service name (any provider); case-insensitive.'),
    firstObservedAtStart: { kind: 'datetime', description: 'Inclusive start of the firstObservedAt range.' },
    firstObservedAtEnd: { kind: 'datetime', description: 'Inclusive end of the firstObservedAt range.' },
    hasAdminPrivileges: bool('Filter on hasAdminPrivileges.'),
    hasOverlyPermissivePrivileges: bool('Filter on hasOverlyPermissivePrivileges.'),
    isSusceptibleToPrivilegeEscalation: bool('Filter on isSusceptibleToPrivilegeEscalation.'),
    hasKev: bool('Filter on hasKev.'),
    hasExploit: bool('Filter on hasExploit.'),
    isExploitable: bool('Filter on isExploitable.'),
    isPubliclyExposed: bool('Filter on isPubliclyExposed.'),
    isVulnerable: bool('Filter on isVulnerable.'),
    query: { kind: 'string', description: 'Case-insensitive substring of the asset name.' },
    metadata: { kind: 'string', description: 'Case-insensitive substring of any key or scalar value inside rawData.' },
    riskScoreGte: { kind: 'decimal', min: 0, max: 10, description: 'Minimum riskScore, 0 to 10.' },
    operationalStates: { kind: 'list', item: { type: 'enum', values: operationalStates }, description: 'Only resource types that support an operational state (AWS::EC2::Instance).' },
    sortBy: { kind: 'enum', values: sortableAssetFields, description: 'Sort key (default: id). Ties break by id in the same direction; nulls last.' },
    sortOrder: { kind: 'enum', values: ['ASC', 'DESC'], description: 'Requires sortBy. Default ASC.' },
    page: { kind: 'integer', min: 1, max: 1_000_000, default: 1, description: 'Page number.' },
    perPage: { kind: 'integer', min: 1, max: 1000, default: 100, description: 'Page size.' },
  },
  { ranges: [['firstObservedAtStart', 'firstObservedAtEnd']], requires: [['sortOrder', 'sortBy']] },
);
export type ListAssetsQuery = ReturnType<typeof listAssetsQuery.parse>;

export const getAssetQuery = defineQuery({
  include: { kind: 'list', item: { type: 'enum', values: ['rawData'] }, description: 'rawData adds the asset raw data.' },
});
export type GetAssetQuery = ReturnType<typeof getAssetQuery.parse>;

export const PageMeta = Type.Object({
  page: Type.Integer(), perPage: Type.Integer(), total: Type.Integer(), hasNextPage: Type.Boolean(), hasPreviousPage: Type.Boolean(),
});
