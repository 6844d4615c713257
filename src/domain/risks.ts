// The risk, the integration that produced it, and the vocabulary of the risk list.
import { Type, type Static } from 'typebox';
import { lifecycleStates, riskSeverities } from './enums.js';
import { formatParam, querySpec, type ParsedQuery } from './query.js';
import {
  FreeObject,
  Nullable,
  NullableNumber,
  NullableString,
  NullableTimestamp,
  NullableUuid,
  StringEnum,
  Timestamp,
  Uuid,
} from './schema.js';

export const Integration = Type.Object({
  integrationId: Uuid(),
  name: NullableString(),
  tenantId: Uuid(),
  organizationId: Uuid(),
  schedule: NullableString('cron-style expression'),
  scanInterval: NullableNumber(),
  createdAt: NullableTimestamp(),
  updatedAt: NullableTimestamp(),
  provider: NullableString(),
  type: NullableString(),
  detectionSettingId: NullableUuid(),
  status: NullableString(),
  riskScore: NullableNumber(),
  awsAccountId: NullableString(),
  azureSubscriptionId: NullableUuid(),
  azureDirectoryId: NullableUuid(),
  gcpProjectId: NullableString(),
});
export type Integration = Static<typeof Integration>;

export const Risk = Type.Object({
  id: Type.String(),
  riskTypeId: NullableString(),
  organizationId: Uuid(),
  tenantId: Uuid(),
  integrationId: NullableUuid(),
  description: NullableString(),
  primaryAssetId: NullableString(),
  region: NullableString(),
  resolutions: Type.Array(Type.Object({ key: NullableString(), type: NullableString(), title: NullableString() })),
  score: Type.Number(),
  likelihood: NullableNumber(),
  impact: NullableNumber(),
  severityLevel: StringEnum(riskSeverities),
  factors: Type.Array(
    Type.Object({
      key: NullableString(),
      meta: Nullable(FreeObject()),
      title: NullableString(),
      value: NullableNumber(),
      verificationState: NullableString(),
      description: NullableString(),
    }),
  ),
  meta: Nullable(
    Type.Object({ assetName: NullableString(), resourceType: NullableString(), fullResourceName: NullableString() }),
  ),
  discoveredAt: Timestamp(),
  lifecycleState: StringEnum(lifecycleStates),
});
export type Risk = Static<typeof Risk>;

export const riskFieldNames = Object.keys(Risk.properties) as (keyof Risk)[];
export const riskIncludes = ['primaryAsset', 'integration'] as const;
export const riskSortFields = ['discoveredAt', 'score'] as const;

const strings = (description: string) => ({ kind: 'list', item: { type: 'string' }, description }) as const;

export const listRisksSpec = querySpec(
  {
    ids: strings('Risk ids, matched exactly and case-sensitively.'),
    fields: {
      kind: 'list',
      item: { type: 'enum', values: riskFieldNames },
      description:
        'Return only these risk properties (risk properties only: `include` is independent of it). An unknown name is 400.',
    },
    riskTypeIds: strings('Risk type ids, matched exactly.'),
    environmentIds: {
      kind: 'list',
      item: { type: 'environment' },
      description: "Environment UUIDs and/or the names production, non-production (through the risk's integration).",
    },
    integrationIds: strings('Integration ids, matched exactly.'),
    primaryAssetIds: strings('Primary asset ids (asset resource names), matched exactly.'),
    severityLevels: { kind: 'list', item: { type: 'enum', values: riskSeverities }, description: 'Risk severities.' },
    lifecycleStates: {
      kind: 'list',
      item: { type: 'enum', values: lifecycleStates },
      description: 'Lifecycle states.',
    },
    resourceTypes: strings('Matches meta.resourceType.'),
    discoveredAtStart: { kind: 'datetime', description: 'Inclusive start of the discoveredAt range.' },
    discoveredAtEnd: { kind: 'datetime', description: 'Inclusive end of the discoveredAt range.' },
    updatedSince: {
      kind: 'datetime',
      description:
        'Risks with a change in the log (opened, updated, resolved, dismissed, reopened) committed at or after this time.',
    },
    include: {
      kind: 'list',
      item: { type: 'enum', values: riskIncludes },
      description: 'Embed the primary asset and/or the integration (null when not in the inventory).',
    },
    sortBy: {
      kind: 'enum',
      values: riskSortFields,
      default: 'discoveredAt',
      description: 'Sort key; ties break by id in the same direction.',
    },
    sortOrder: {
      kind: 'enum',
      values: ['asc', 'desc'],
      default: 'desc',
      description: 'Sort direction (applies to the default sort key when sortBy is absent).',
    },
    cursor: {
      kind: 'string',
      description:
        'The opaque `meta.cursor` of the previous batch, passed unchanged with the same filters, sort, fields and include (else 400 invalid_cursor).',
    },
    perPage: {
      kind: 'integer',
      min: 1,
      max: 100,
      default: 100,
      description: 'Batch size, an integer from 1 to 100 (default 100); may change between batches.',
    },
    format: formatParam,
  },
  { ranges: [['discoveredAtStart', 'discoveredAtEnd']], paging: ['perPage', 'cursor'] },
);
export type ListRisksQuery = ParsedQuery<typeof listRisksSpec.params>;
