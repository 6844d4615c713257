// The asset: its record type as the API returns it, the fields the service derives, and the vocabulary of its list
// and get operations (parameters, sort keys).
import { Type, type Static } from 'typebox';
import type { DerivedAssetFields } from './derived.js';
import { operationalStates, providers, riskSeverities } from './enums.js';
import { formatParam, querySpec, type ParsedQuery } from './query.js';
import {
  Bool,
  FreeObject,
  KeyValueTag,
  Nullable,
  NullableInteger,
  NullableNumber,
  NullableString,
  NullableTimestamp,
  NullableUuid,
  StringEnum,
  Timestamp,
  Uuid,
} from './schema.js';

const OperatingSystem = Type.Object({
  architecture: NullableString(),
  name: NullableString(),
  platform: NullableString(),
  version: NullableString(),
  versionId: NullableNumber(),
  activeKernel: NullableString(),
  buildNumber: NullableString(),
  lcuVersion: NullableString(),
});

const ResourceTag = Type.Object({
  Key: NullableString(),
  Value: Nullable(Type.Union([Type.String(), Type.Boolean()])),
});

/** The asset as the API returns it (without `rawData`, which only the get operation adds on request). */
export const Asset = Type.Object({
  schemaVersion: NullableString('Date-like schema version label'),
  id: Type.String({ description: 'Asset resource name' }),
  organizationId: Uuid(),
  tenantId: Uuid(),
  integrationId: NullableUuid(),
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

/** Fields the service computes from the findings (src/domain/derived.ts, deriveAssetFields); imported values are ignored. */
export const derivedAssetFields = [
  'isVulnerable',
  'numberOfLowVulnerabilities',
  'numberOfMediumVulnerabilities',
  'numberOfHighVulnerabilities',
  'numberOfCriticalVulnerabilities',
  'vulnerabilityScore',
  'hasKev',
  'hasExploit',
  'isExploitable',
] as const satisfies readonly (keyof DerivedAssetFields)[];

/** Fields computed from the secret arrays (src/domain/derived.ts, secretCounts); imported values are ignored. */
export const secretCountFields = [
  'numberOfLowSecrets',
  'numberOfMediumSecrets',
  'numberOfHighSecrets',
  'numberOfCriticalSecrets',
] as const;

export const AssetWithRawData = Type.Intersect([Asset, Type.Object({ rawData: FreeObject() })]);

export const sortableAssetFields = [
  'id',
  'executionId',
  'integrationId',
  'resourceType',
  'service',
  'region',
  'name',
  'provider',
  'firstObservedAt',
  'lastObservedAt',
  'riskScore',
  'vulnerabilityScore',
  'numberOfLowVulnerabilities',
  'numberOfMediumVulnerabilities',
  'numberOfHighVulnerabilities',
  'numberOfCriticalVulnerabilities',
] as const;
export type AssetSortField = (typeof sortableAssetFields)[number];

const bool = (description: string) => ({ kind: 'boolean', description }) as const;
const strings = (description: string) => ({ kind: 'list', item: { type: 'string' }, description }) as const;

export const listAssetsSpec = querySpec(
  {
    ids: strings('Asset ids (resource names), matched exactly and case-sensitively.'),
    executionIds: {
      kind: 'list',
      item: { type: 'integer' },
      description: 'Integration execution ids; each item must be an integer.',
    },
    regions: strings('Provider regions (`region`), matched exactly and case-sensitively.'),
    integrationIds: strings('Integration ids (`integrationId`), matched exactly.'),
    assetGroupIds: strings(
      'Asset group ids: assets that are members of any listed group (an unknown group matches nothing).',
    ),
    environmentIds: {
      kind: 'list',
      item: { type: 'environment' },
      description:
        "Environments of the asset's integration: environment UUIDs (any letter case) and/or the names production, non-production (every environment flagged production / not production).",
    },
    severityLevels: {
      kind: 'list',
      item: { type: 'enum', values: riskSeverities },
      description: 'Assets with at least one counted vulnerability of a listed severity.',
    },
    secretsLevels: {
      kind: 'list',
      item: { type: 'enum', values: riskSeverities },
      description: 'Assets with at least one exposed secret of a listed severity.',
    },
    resourceTypes: strings('Provider resource types (matches resourceType).'),
    providers: { kind: 'list', item: { type: 'enum', values: providers }, description: "The asset's provider." },
    services: strings('`Provider::Service` (exact) or a bare service name (any provider); case-insensitive.'),
    firstObservedAtStart: { kind: 'datetime', description: 'Inclusive start of the firstObservedAt range.' },
    firstObservedAtEnd: { kind: 'datetime', description: 'Inclusive end of the firstObservedAt range.' },
    updatedSince: {
      kind: 'datetime',
      description:
        'Assets observed or changed at or after this time: whose lastObservedAt is at or after it, or that have a change in the log (their own, or of their findings) committed at or after it.',
    },
    hasAdminPrivileges: bool('Assets whose hasAdminPrivileges is this value.'),
    hasOverlyPermissivePrivileges: bool('Assets whose hasOverlyPermissivePrivileges is this value.'),
    isSusceptibleToPrivilegeEscalation: bool(
      'Assets whose imported isSusceptibleToPrivilegeEscalation attribute (absent means false) is this value.',
    ),
    hasKev: bool(
      'Assets with (true) or without (false) a non-exempted finding in the known exploited vulnerabilities catalog.',
    ),
    hasExploit: bool(
      'Assets with (true) or without (false) a non-exempted finding referenced in a public exploit database.',
    ),
    isExploitable: bool('Assets with (true) or without (false) a non-exempted exploitable finding.'),
    isPubliclyExposed: bool('Assets whose isPubliclyExposed is this value.'),
    isVulnerable: bool('Assets with (true) or without (false) any non-exempted finding.'),
    query: { kind: 'string', description: 'Case-insensitive substring of the asset name.' },
    metadata: {
      kind: 'string',
      description:
        "Case-insensitive substring of any key, or of any string, number or boolean value, anywhere inside the asset's raw data.",
    },
    riskScoreGte: {
      kind: 'decimal',
      min: 0,
      max: 10,
      description:
        'Minimum riskScore (inclusive): a decimal number from 0 to 10, digits with an optional fraction (`7` or `7.5`).',
    },
    operationalStates: {
      kind: 'list',
      item: { type: 'enum', values: operationalStates },
      description: 'Operational states; only assets of resource types that support one (AWS::EC2::Instance) match.',
    },
    sortBy: {
      kind: 'enum',
      values: sortableAssetFields,
      description: 'Sort key (default: id). Ties break by id in the same direction; nulls last.',
    },
    sortOrder: { kind: 'enum', values: ['ASC', 'DESC'], description: 'Requires sortBy. Default ASC.' },
    page: {
      kind: 'integer',
      min: 1,
      max: 1_000_000,
      default: 1,
      description:
        'Page number, an integer from 1 to 1000000 (default 1). A page past the end answers an empty `data` with the true `total`.',
    },
    perPage: {
      kind: 'integer',
      min: 1,
      max: 1000,
      default: 100,
      description: 'Page size, an integer from 1 to 1000 (default 100).',
    },
    format: formatParam,
  },
  {
    ranges: [['firstObservedAtStart', 'firstObservedAtEnd']],
    requires: [['sortOrder', 'sortBy']],
    paging: ['page', 'perPage'],
  },
);
export type ListAssetsQuery = ParsedQuery<typeof listAssetsSpec.params>;

export const getAssetSpec = querySpec({
  include: {
    kind: 'list',
    item: { type: 'enum', values: ['rawData'] },
    description: "rawData adds the asset's raw data (`rawData`, `{}` when none was imported).",
  },
});
export type GetAssetQuery = ParsedQuery<typeof getAssetSpec.params>;
