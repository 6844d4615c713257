import { Type, type Static } from 'typebox';
import { defineQuery } from '../../http/query.js';
import {
  FreeObject, Nullable, NullableNumber, NullableString, NullableTimestamp, StringEnum, Timestamp, riskSeverities,
} from '../../schemas/common.js';

export const lifecycleStates = ['DISMISSED_ACCEPTED', 'DISMISSED_NOT_A_RISK', 'OPEN'] as const;

export const Integration = Type.Object({
  integrationId: Type.String(),
  name: NullableString(),
  tenantId: Type.String({ format: 'uuid' }),
  organizationId: Type.String({ format: 'uuid' }),
  schedule: NullableString('cron-style expression'),
  scanInterval: NullableNumber(),
  createdAt: NullableTimestamp(),
  updatedAt: NullableTimestamp(),
  provider: NullableString(),
  type: NullableString(),
  detectionSettingId: NullableString(),
  status: NullableString(),
  riskScore: NullableNumber(),
  awsAccountId: NullableString(),
  azureSubscriptionId: NullableString(),
  azureDirectoryId: NullableString(),
  gcpProjectId: NullableString(),
});
export type Integration = Static<typeof Integration>;

export const Risk = Type.Object({
  id: Type.String(),
  riskTypeId: NullableString(),
  organizationId: Type.String({ format: 'uuid' }),
  tenantId: Type.String({ format: 'uuid' }),
  integrationId: NullableString(),
  description: NullableString(),
  primaryAssetId: NullableString(),
  region: NullableString(),
  resolutions: Type.Array(Type.Object({ key: NullableString(), type: NullableString(), title: NullableString() })),
  score: Type.Number(),
  likelihood: NullableNumber(),
  impact: NullableNumber(),
  severityLevel: StringEnum(riskSeverities),
  factors: Type.Array(Type.Object({
    key: NullableString(), meta: Nullable(FreeObject()), title: NullableString(), value: NullableNumber(),
    verificationState: NullableString(), description: NullableString(),
  })),
  meta: Nullable(Type.Object({ assetName: NullableString(), resourceType: NullableString(), fullResourceName: NullableString() })),
  discoveredAt: Timestamp(),
  lifecycleState: StringEnum(lifecycleStates),
});
export type Risk = Static<typeof Risk>;

export const riskFieldNames = Object.keys(Risk.properties) as (keyof Risk)[];
export const riskIncludes = ['primaryAsset', 'integration'] as const;
export const riskSortFields = ['discoveredAt', 'score'] as const;

const strings = (description: string) => ({ kind: 'list', item: { type: 'string' }, description }) as const;

export const listRisksQuery = defineQuery(
  {
    ids: strings('Risk ids.'),
    fields: { kind: 'list', item: { type: 'enum', values: riskFieldNames }, description: 'Risk properties to return (risk properties only; include is independent).' },
    riskTypeIds: strings('Risk type ids.'),
    environmentIds: { kind: 'list', item: { type: 'environment' }, description: 'Environment UUIDs and/or the names production, non-production (through the risk\'s integration).' },
    integrationIds: strings('Integration ids.'),
    primaryAssetIds: strings('Primary asset ids.'),
    severityLevels: { kind: 'list', item: { type: 'enum', values: riskSeverities }, description: 'Severities.' },
    lifecycleStates: { kind: 'list', item: { type: 'enum', values: lifecycleStates }, description: 'Lifecycle states.' },
    resourceTypes: strings('Matches meta.resourceType.'),
    discoveredAtStart: { kind: 'datetime', description: 'Inclusive start of the discoveredAt range.' },
    discoveredAtEnd: { kind: 'datetime', description: 'Inclusive end of the discoveredAt range.' },
    include: { kind: 'list', item: { type: 'enum', values: riskIncludes }, description: 'Embed the primary asset and/or the integration (null when not in the inventory).' },
    sortBy: { kind: 'enum', values: riskSortFields, default: 'discoveredAt', description: 'Sort key; ties break by id in the same direction.' },
    sortOrder: { kind: 'enum', values: ['asc', 'desc'], default: 'desc', description: 'Sort direction (applies to the default sort key when sortBy is absent).' },
    cursor: { kind: 'string', description: 'meta.cursor of the previous batch, with the same filters, sort, fields and include.' },
    perPage: { kind: 'integer', min: 1, max: 100, default: 100, description: 'Batch size.' },
  },
  { ranges: [['discoveredAtStart', 'discoveredAtEnd']] },
);
export type ListRisksQuery = ReturnType<typeof listRisksQuery.parse>;

export const CursorMeta = Type.Object({ perPage: Type.Integer(), total: Type.Integer(), cursor: Type.Union([Type.String(), Type.Null()]) });
