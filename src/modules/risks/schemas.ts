// HTTP side of the risk list: its query parser, response schemas and the examples of the OpenAPI document. The record
// and its query vocabulary live in src/domain/risks.ts.
import { Type } from 'typebox';
import { listRisksSpec, type Integration, type Risk } from '../../domain/risks.js';
import { defineQuery } from '../../http/query.js';
import { EXAMPLE_ORGANIZATION, EXAMPLE_TENANT, queryExamples, ref } from '../../http/docs.js';
import { assetExample } from '../assets/schemas.js';

export type { ListRisksQuery } from '../../domain/risks.js';

export const listRisksQuery = defineQuery(listRisksSpec);

export const CursorMeta = Type.Object(
  {
    perPage: Type.Integer({ description: 'The batch size of this response' }),
    total: Type.Integer({ description: 'How many risks match the filters (regardless of the cursor)' }),
    cursor: Type.Union([Type.String(), Type.Null()], {
      description:
        'Pass it as `cursor` (with the same filters, sort, `fields` and `include`) for the next batch; `null` on the last batch',
    }),
  },
  { description: 'Position of a batch in the cursor-paginated list' },
);

// ---- OpenAPI documentation of the risk list (see src/http/docs.ts) ----

/** A risk of the list: the Risk properties (with `fields`, only those named), plus what `include` asks for. */
export const RiskListItem = Type.Intersect(
  [
    ref('Risk'),
    Type.Object({
      primaryAsset: Type.Optional(
        Type.Union([ref('Asset'), Type.Null()], {
          description:
            "Only with `include=primaryAsset`: the risk's primary asset as the asset operations return it (without `rawData`), or `null` when it is not in the inventory",
        }),
      ),
      integration: Type.Optional(
        Type.Union([ref('Integration'), Type.Null()], {
          description:
            'Only with `include=integration`: the integration that produced the risk, or `null` when it is not in the inventory',
        }),
      ),
    }),
  ],
  {
    description:
      'A risk. Every Risk property is present, unless `fields` is given: then only the risk properties it names are ' +
      '(`primaryAsset` and `integration` still follow `include`).',
  },
);

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
  description:
    'Internet-exposed workload runs software with critical vulnerabilities: checkout-cron-prod-12 (AWS::EC2::Instance) in us-east-2.',
  primaryAssetId: 'sirn:assets:4f10d8f8-7ac2-44e9-abd3-e1482e23fdff:aws:ec2:instance:us-east-2:i-07b1e1016f9ae97f0',
  region: 'us-east-2',
  resolutions: [
    { key: 'patch-packages', type: 'REMEDIATION', title: 'Update the vulnerable packages to a fixed version' },
  ],
  score: 8.7,
  likelihood: 0.9,
  impact: 9.6,
  severityLevel: 'CRITICAL',
  factors: [
    {
      key: 'internet-exposure',
      meta: { ports: [443], sourceCidr: '0.0.0.0/0' },
      title: 'Reachable from the internet',
      value: 0.84,
      verificationState: 'VERIFIED',
      description: 'Reachable from the internet on checkout-cron-prod-12.',
    },
  ],
  meta: {
    assetName: 'checkout-cron-prod-12',
    resourceType: 'AWS::EC2::Instance',
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
    cursor:
      'WzEsIjIwMjUtMDktMjFUMTY6MzE6NTQuNDU2WiIsIjUzMzQzYWI5LTAzN2EtNGIwNy04ZjVjLTdkNjYxM2VlYzc4MCJd.dQnPKxQqf5CGQxGGTVCI2A',
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
