import { Type, type Static } from 'typebox';
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
