import { Type, type Static } from 'typebox';
import { defineQuery } from '../../http/query.js';
import { EXAMPLE_ORGANIZATION, EXAMPLE_TENANT, queryExamples, ref } from '../../http/docs.js';
import { assetExample } from '../assets/schemas.js';
import {
  FreeObject, Nullable, NullableNumber, NullableString, NullableTimestamp, StringEnum, Timestamp, riskSeverities,
} from '../../domain/schema.js';

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
    ids: strings('Risk ids, matched exactly and case-sensitively.'),
    fields: { kind: 'list', item: { type: 'enum', values: riskFieldNames }, description: 'Return only these risk properties (risk properties only: `include` is independent of it). An unknown name is 400.' },
    riskTypeIds: strings('Risk type ids, matched exactly.'),
    environmentIds: { kind: 'list', item: { type: 'environment' }, description: 'Environment UUIDs and/or the names production, non-production (through the risk\'s integration).' },
    integrationIds: strings('Integration ids, matched exactly.'),
    primaryAssetIds: strings('Primary asset ids (asset resource names), matched exactly.'),
    severityLevels: { kind: 'list', item: { type: 'enum', values: riskSeverities }, description: 'Risk severities.' },
    lifecycleStates: { kind: 'list', item: { type: 'enum', values: lifecycleStates }, description: 'Lifecycle states.' },
    resourceTypes: strings('Matches meta.resourceType.'),
    discoveredAtStart: { kind: 'datetime', description: 'Inclusive start of the discoveredAt range.' },
    discoveredAtEnd: { kind: 'datetime', description: 'Inclusive end of the discoveredAt range.' },
    include: { kind: 'list', item: { type: 'enum', values: riskIncludes }, description: 'Embed the primary asset and/or the integration (null when not in the inventory).' },
    sortBy: { kind: 'enum', values: riskSortFields, default: 'discoveredAt', description: 'Sort key; ties break by id in the same direction.' },
    sortOrder: { kind: 'enum', values: ['asc', 'desc'], default: 'desc', description: 'Sort direction (applies to the default sort key when sortBy is absent).' },
    cursor: { kind: 'string', description: 'The opaque `meta.cursor` of the previous batch, passed unchanged with the same filters, sort, fields and include (else 400 invalid_cursor).' },
    perPage: { kind: 'integer', min: 1, max: 100, default: 100, description: 'Batch size, an integer from 1 to 100 (default 100); may change between batches.' },
  },
  { ranges: [['discoveredAtStart', 'discoveredAtEnd']] },
);
export type ListRisksQuery = ReturnType<typeof listRisksQuery.parse>;

export const CursorMeta = Type.Object({
  perPage: Type.Integer({ description: 'The batch size of this response' }),
  total: Type.Integer({ description: 'How many risks match the filters (regardless of the cursor)' }),
  cursor: Type.Union([Type.String(), Type.Null()], {
    description: 'Pass it as `cursor` (with the same filters, sort, `fields` and `include`) for the next batch; `null` on the last batch',
  }),
}, { description: 'Position of a batch in the cursor-paginated list' });

// ---- OpenAPI documentation of the risk list (see src/http/docs.ts) ----

/** A risk of the list: the Risk properties (with `fields`, only those named), plus what `include` asks for. */
export const RiskListItem = Type.Intersect([
  ref('Risk'),
  Type.Object({
    primaryAsset: Type.Optional(Type.Union([ref('Asset'), Type.Null()], {
      description: 'Only with `include=primaryAsset`: the risk\'s primary asset as the asset operations return it (without `rawData`), or `null` when it is not in the inventory',
    })),
    integration: Type.Optional(Type.Union([ref('Integration'), Type.Null()], {
      description: 'Only with `include=integration`: the integration that produced the risk, or `null` when it is not in the inventory',
    })),
  }),
], {
  description: 'A risk. Every Risk property is present, unless `fields` is given: then only the risk properties it names are '
    + '(`primaryAsset` and `integration` still follow `include`).',
});

export const ListRisksResponse = Type.Object({
  data: Type.Array(RiskListItem, { description: 'The risks of this batch' }),
  meta: ref('CursorMeta'),
});

const TENANT = EXAMPLE_TENANT;
const ORGANIZATION = EXAMPLE_ORGANIZATION;

export const integrationExample: Integration = {
  integrationId: '6850935f-d658-412c-bd99-804d7616d1d2',
  name: 'AWS prod (866483505163)',
  tenantId: TENANT,
  organizationId: ORGANIZATION,
  schedule: '0 2 * * *',
  scanInterval: 86400,
  createdAt: '2025-06-08T12:19:16.691Z',
  updatedAt: '2026-01-13T19:34:36.866Z',
  provider: 'AWS',
  type: 'AWS_ACCOUNT',
  detectionSettingId: '6bd6c404-6007-4a48-b432-cbde739156e0',
  status: 'CONNECTED',
  riskScore: 3.3,
  awsAccountId: '866483505163',
  azureSubscriptionId: null,
  azureDirectoryId: null,
  gcpProjectId: null,
};

export const riskExample: Risk = {
  id: '53343ab9-037a-4b07-8f5c-7d6613eec780',
  riskTypeId: 'exposed-workload-with-critical-vulnerabilities',
  organizationId: ORGANIZATION,
  tenantId: TENANT,
  integrationId: '6850935f-d658-412c-bd99-804d7616d1d2',
  description: 'Internet-exposed workload runs software with critical vulnerabilities: checkout-cron-prod-12 (AWS::EC2::Instance) in us-east-2.',
  primaryAssetId: 'sirn:assets:4f10d8f8-7ac2-44e9-abd3-e1482e23fdff:aws:ec2:instance:us-east-2:i-07b1e1016f9ae97f0',
  region: 'us-east-2',
  resolutions: [{ key: 'patch-packages', type: 'REMEDIATION', title: 'Update the vulnerable packages to a fixed version' }],
  score: 8.7,
  likelihood: 0.9,
  impact: 9.6,
  severityLevel: 'CRITICAL',
  factors: [{
    key: 'internet-exposure', meta: { ports: [443], sourceCidr: '0.0.0.0/0' }, title: 'Reachable from the internet', value: 0.84,
    verificationState: 'VERIFIED', description: 'Reachable from the internet on checkout-cron-prod-12.',
  }],
  meta: {
    assetName: 'checkout-cron-prod-12', resourceType: 'AWS::EC2::Instance',
    fullResourceName: 'arn:aws:ec2:us-east-2:866483505163:instance/i-07b1e1016f9ae97f0',
  },
  discoveredAt: '2025-09-21T16:31:54.456Z',
  lifecycleState: 'OPEN',
};

/** A batch with `include=primaryAsset,integration`. */
export const listRisksExample = {
  data: [{ ...riskExample, primaryAsset: assetExample, integration: integrationExample }],
  meta: {
    perPage: 1,
    total: 57,
    cursor: 'WzEsIjIwMjUtMDktMjFUMTY6MzE6NTQuNDU2WiIsIjUzMzQzYWI5LTAzN2EtNGIwNy04ZjVjLTdkNjYxM2VlYzc4MCJd.dQnPKxQqf5CGQxGGTVCI2A',
  },
};

queryExamples(listRisksQuery, {
  fields: 'id,severityLevel,score,primaryAssetId',
  severityLevels: 'CRITICAL,HIGH',
  lifecycleStates: 'OPEN',
  environmentIds: 'production',
  discoveredAtStart: '2026-01-01',
  include: 'primaryAsset,integration',
  sortBy: 'score',
  sortOrder: 'desc',
  perPage: '50',
});
