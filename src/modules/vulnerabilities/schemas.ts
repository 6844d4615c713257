import { Type, type Static } from 'typebox';
import {
  Bool, CalendarDate, Nullable, NullableString, NullableTimestamp, StringEnum, Timestamp, findingSeverities,
  providers,
} from '../../schemas/common.js';

export const ExemptionRule = Type.Object({
  exemptionType: NullableString(),
  vulnerabilityId: NullableString(),
  vulnerabilityIds: Nullable(Type.Array(Type.String())),
  assetIds: Nullable(Type.Array(Type.String())),
  assetGroupIds: Nullable(Type.Array(Type.String())),
  assetRegions: Nullable(Type.Array(Type.String())),
  assetTags: Nullable(Type.Array(Type.Object({ key: Type.String(), value: Type.String() }))),
  noVendorFix: Bool(),
});
export type ExemptionRule = Static<typeof ExemptionRule>;

export const Exemption = Type.Object({
  name: NullableString(),
  reason: NullableString(),
  createdAt: NullableTimestamp(),
  updatedAt: NullableTimestamp(),
  rules: Type.Array(ExemptionRule),
});
export type Exemption = Static<typeof Exemption>;

const Package = Type.Object({
  packageName: NullableString(), targetName: NullableString(), targetType: NullableString(), targetPath: NullableString(),
  targetClass: NullableString(), fixedVersion: NullableString(), installedVersion: NullableString(),
});

const Cwe = Type.Object({
  id: NullableString(), name: NullableString(), cweId: NullableString(), source: NullableString(), sourceUrl: NullableString(),
  description: NullableString(),
});

const KnownExploit = Type.Object({
  cveID: NullableString(), notes: NullableString(), product: NullableString(), vendorProject: NullableString(),
  requiredAction: NullableString(), shortDescription: NullableString(), vulnerabilityName: NullableString(),
  dueDate: Nullable(CalendarDate()), dateAdded: Nullable(CalendarDate()),
});

const ExploitRef = Type.Object({
  id: NullableString(), title: NullableString(), description: NullableString(), source: NullableString(), sourceUrl: NullableString(),
});

export const severityLevelValues: Record<(typeof findingSeverities)[number], number> = {
  CRITICAL: 5, HIGH: 4, MEDIUM: 3, LOW: 2, INFORMATIONAL: 1, UNKNOWN: 0,
};

/** One finding as the API returns it. */
export const Vulnerability = Type.Object({
  schemaVersion: NullableString(),
  assetId: Type.String(),
  organizationId: Type.String({ format: 'uuid' }),
  tenantId: Type.String({ format: 'uuid' }),
  integrationId: NullableString(),
  vulnerabilityId: Type.String(),
  provider: Nullable(StringEnum(providers)),
  assetType: NullableString(),
  description: NullableString(),
  title: NullableString(),
  severityLevel: StringEnum(findingSeverities),
  severityLevelValue: Type.Integer({ description: 'Derived: CRITICAL 5, HIGH 4, MEDIUM 3, LOW 2, INFORMATIONAL 1, UNKNOWN 0' }),
  severitySource: NullableString(),
  firstObservedAt: Timestamp(),
  lastObservedAt: Timestamp(),
  publishedDate: NullableTimestamp(),
  executionId: NullableString(),
  targetName: NullableString(),
  primaryUrl: NullableString(),
  packages: Type.Array(Package),
  cwes: Type.Array(Cwe),
  hasKev: Bool(),
  hasExploit: Bool(),
  hasVendorFix: Bool('Derived: any package has a non-empty fixedVersion'),
  knownExploit: Nullable(KnownExploit),
  exploits: Type.Array(ExploitRef),
  isExploitable: Bool('Imported attribute (absent means false)'),
  exemptions: Type.Array(Type.Object({ exemptionId: Type.String(), exemption: Exemption })),
});
export type Vulnerability = Static<typeof Vulnerability>;

export const derivedVulnerabilityFields = ['severityLevelValue', 'hasVendorFix', 'exemptions'] as const;

