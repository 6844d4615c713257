// Builders of import records for the tests, as importRecords (test/helpers.ts) takes them: each fills what an import
// requires with fixed values (tenant A, an AWS bucket, observed on 2024-01-01 and 02), so that a test names only the
// fields it is about. NDJSON lines of them for the tests that write import files.
import { randomUUID } from 'node:crypto';
export const TENANT_A = '11111111-1111-4111-8111-111111111111';
export const TENANT_B = '22222222-2222-4222-8222-222222222222';
export const ORG_A = 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa';
export const ORG_B = 'bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb';

/** A record of an import file: its kind and the record. */
export type ImportRecord = [kind: string, record: Record<string, unknown>];

/** The observation dates the builders give a record that names none. */
export const DATES = { firstObservedAt: '2024-01-01', lastObservedAt: '2024-01-02' };

export const tenantRecord = (tenantId = TENANT_A, fields: Record<string, unknown> = {}): ImportRecord => [
  'tenant',
  { tenantId, organizationId: ORG_A, ...fields },
];

export const assetRecord = (id: string, fields: Record<string, unknown> = {}): ImportRecord => [
  'asset',
  { tenantId: TENANT_A, id, provider: 'AWS', type: 'AWS::S3::Bucket', ...DATES, ...fields },
];

export const findingRecord = (
  assetId: string,
  vulnerabilityId: string,
  severityLevel = 'HIGH',
  fields: Record<string, unknown> = {},
): ImportRecord => [
  'vulnerability',
  { tenantId: TENANT_A, assetId, vulnerabilityId, severityLevel, ...DATES, ...fields },
];

/** An exemption of these rules, named `name` unless `exemption` says otherwise. */
export const exemptionRecord = (
  exemptionId: string,
  rules: Record<string, unknown>[],
  { tenantId = TENANT_A, ...exemption }: Record<string, unknown> = {},
): ImportRecord => [
  'exemption',
  { tenantId, exemptionId, exemption: { name: 'accepted', reason: 'RISK_ACCEPTED', ...exemption, rules } },
];

export const riskRecord = (id: string, fields: Record<string, unknown> = {}): ImportRecord => [
  'risk',
  {
    tenantId: TENANT_A,
    id,
    severityLevel: 'HIGH',
    score: 5,
    discoveredAt: '2024-01-01',
    lifecycleState: 'OPEN',
    ...fields,
  },
];

/** The line of an import file holding the record. */
export const ndjsonLine = ([kind, record]: ImportRecord): string => JSON.stringify({ kind, record });

/** The lines of an import file holding the records, without a newline after the last. */
export const ndjson = (records: readonly ImportRecord[]): string => records.map(ndjsonLine).join('\n');

/** A scan as an upload hands it to storage (acceptScan): of tenant A, with a new id and no options. */
export const newScan = () => ({
  id: randomUUID(),
  tenantId: TENANT_A,
  name: null,
  options: {},
  keyId: null,
  idempotencyKey: null,
  submittedAt: new Date().toISOString(),
});
