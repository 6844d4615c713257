// The vulnerability finding (one vulnerability on one asset), the exemptions that may match it, and the vocabulary of
// the vulnerability list.
import { Type, type Static } from 'typebox';
import { findingSeverities, providers } from './enums.js';
import { formatParam, querySpec, type ParsedQuery } from './query.js';
import {
  Bool,
  CalendarDate,
  Nullable,
  NullableString,
  NullableTimestamp,
  NullableUuid,
  StringEnum,
  Timestamp,
  Uuid,
} from './schema.js';

export const ExemptionRule = Type.Object({
  exemptionType: NullableString(),
  vulnerabilityId: NullableString(),
  vulnerabilityIds: Nullable(Type.Array(Type.String())),
  assetIds: Nullable(Type.Array(Type.String())),
  assetGroupIds: Nullable(Type.Array(Uuid())),
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
  // Optional: exemptions stored before it was a field have none, and never expire.
  expiresAt: Type.Optional(
    NullableTimestamp('When the exemption stops applying (its findings count again); null or absent: never.'),
  ),
});
export type Exemption = Static<typeof Exemption>;

const Package = Type.Object({
  packageName: NullableString(),
  targetName: NullableString(),
  targetType: NullableString(),
  targetPath: NullableString(),
  targetClass: NullableString(),
  fixedVersion: NullableString(),
  installedVersion: NullableString(),
});

const Cwe = Type.Object({
  id: NullableString(),
  name: NullableString(),
  cweId: NullableString(),
  source: NullableString(),
  sourceUrl: NullableString(),
  description: NullableString(),
});

const KnownExploit = Type.Object({
  cveID: NullableString(),
  notes: NullableString(),
  product: NullableString(),
  vendorProject: NullableString(),
  requiredAction: NullableString(),
  shortDescription: NullableString(),
  vulnerabilityName: NullableString(),
  dueDate: Nullable(CalendarDate()),
  dateAdded: Nullable(CalendarDate()),
});

const ExploitRef = Type.Object({
  id: NullableString(),
  title: NullableString(),
  description: NullableString(),
  source: NullableString(),
  sourceUrl: NullableString(),
});

/** One finding as the API returns it. */
export const Vulnerability = Type.Object({
  schemaVersion: NullableString(),
  assetId: Type.String(),
  organizationId: Uuid(),
  tenantId: Uuid(),
  integrationId: NullableUuid(),
  vulnerabilityId: Type.String(),
  provider: Nullable(StringEnum(providers)),
  assetType: NullableString(),
  description: NullableString(),
  title: NullableString(),
  severityLevel: StringEnum(findingSeverities),
  severityLevelValue: Type.Integer({
    description: 'Derived: CRITICAL 5, HIGH 4, MEDIUM 3, LOW 2, INFORMATIONAL 1, UNKNOWN 0',
  }),
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
  exemptions: Type.Array(Type.Object({ exemptionId: Uuid(), exemption: Exemption })),
  dueAt: NullableTimestamp(
    "Extra: firstObservedAt plus the tenant's SLA for the severity, or the KEV entry's dueDate (end of that UTC day) when earlier; null when neither applies",
  ),
  isOverdue: Bool('Extra: not exempted and past dueAt (every listed finding is open)'),
});
export type Vulnerability = Static<typeof Vulnerability>;

export const derivedVulnerabilityFields = [
  'severityLevelValue',
  'hasVendorFix',
  'exemptions',
  'dueAt',
  'isOverdue',
] as const;

export const vulnerabilitySortFields = [
  'hasKev',
  'hasExploit',
  'lastObservedAt',
  'firstObservedAt',
  'severityLevelValue',
] as const;
export type VulnerabilitySortField = (typeof vulnerabilitySortFields)[number];

const strings = (description: string, maxItems?: number) =>
  ({ kind: 'list', item: { type: 'string' }, description, ...(maxItems === undefined ? {} : { maxItems }) }) as const;
const bool = (description: string) => ({ kind: 'boolean', description }) as const;

export const listVulnerabilitiesSpec = querySpec(
  {
    vulnerabilityIds: strings('Vulnerability ids (CVE style).', 100),
    assetIds: strings('Asset ids.', 10),
    providers: { kind: 'list', item: { type: 'enum', values: providers }, description: "The finding's provider." },
    executionIds: strings("The finding's execution ids (strings).", 10),
    integrationIds: strings("The finding's integration ids.", 10),
    assetGroupIds: strings("Groups of the finding's asset."),
    environmentIds: {
      kind: 'list',
      item: { type: 'environment' },
      description: "Environment UUIDs and/or production, non-production (through the finding's integration).",
    },
    packageName: { kind: 'string', description: 'A package of the finding has this name (exact).' },
    regions: strings("Regions of the finding's asset."),
    targetName: { kind: 'string', description: 'A package of the finding has this target name (exact).' },
    targetType: { kind: 'string', description: 'A package of the finding has this target type (exact).' },
    targetClass: strings('A package of the finding has one of these target classes.'),
    hasKev: bool('Findings listed (true) or not (false) in the known exploited vulnerabilities catalog.'),
    isExempted: {
      kind: 'boolean',
      default: false,
      description: 'false (default): only findings no exemption matches; true: only exempted findings.',
    },
    isExploitable: bool('Findings whose imported isExploitable attribute (absent means false) is this value.'),
    hasExploit: bool('Findings referenced (true) or not (false) in a public exploit database.'),
    hasVendorFix: bool('Findings where any package has (true) or none has (false) a non-empty fixedVersion.'),
    severityLevels: {
      kind: 'list',
      item: { type: 'enum', values: findingSeverities },
      description: 'Finding severities.',
    },
    isOverdue: bool('Findings past (true) or not past (false) their dueAt, exempted ones being never overdue.'),
    dueAtEnd: {
      kind: 'datetime',
      description: 'Findings due at or before this time (those without a dueAt never are).',
    },
    firstObservedAtStart: { kind: 'datetime', description: 'Inclusive start of the firstObservedAt range.' },
    firstObservedAtEnd: { kind: 'datetime', description: 'Inclusive end of the firstObservedAt range.' },
    updatedSince: {
      kind: 'datetime',
      description:
        'Findings whose lastObservedAt, or the time of their last change in the log, whichever is later, is at or after this time.',
    },
    sortBy: {
      kind: 'enum',
      values: vulnerabilitySortFields,
      default: 'severityLevelValue',
      description: 'Sort key; ties by (assetId, vulnerabilityId) in the same direction.',
    },
    sortOrder: {
      kind: 'enum',
      values: ['ASC', 'DESC'],
      default: 'DESC',
      description: 'Sort direction (applies to the default key without sortBy).',
    },
    page: {
      kind: 'integer',
      min: 1,
      max: 1_000_000,
      default: 1,
      description:
        'Page number, an integer from 1 to 1000000 (default 1). A page past the end answers an empty `data` with the true `total`. Not with `cursor`.',
    },
    cursor: {
      kind: 'string',
      description:
        'The opaque `meta.cursor` of the previous response, passed unchanged with the same filters and sort (else 400 invalid_cursor): the findings after it. Not with `page`.',
    },
    includeTotal: {
      kind: 'boolean',
      default: true,
      description:
        'true (default): `meta` holds `page`, `total`, `hasNextPage` and `hasPreviousPage` (not with `cursor`); false: `meta` is `{perPage, cursor}` and no count is made.',
    },
    perPage: {
      kind: 'integer',
      min: 1,
      max: 2000,
      default: 100,
      description: 'Page size, an integer from 1 to 2000 (default 100).',
    },
    format: formatParam,
  },
  {
    ranges: [['firstObservedAtStart', 'firstObservedAtEnd']],
    conflicts: [['page', 'cursor', 'a cursor continues from its own position']],
    paging: ['page', 'perPage', 'cursor', 'includeTotal'],
  },
);
export type ListVulnerabilitiesQuery = ParsedQuery<typeof listVulnerabilitiesSpec.params>;
