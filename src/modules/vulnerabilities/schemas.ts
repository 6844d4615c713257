import { Type, type Static } from 'typebox';
import { defineQuery } from '../../http/query.js';
import { queryExamples, ref } from '../../http/docs.js';
import {
  Bool, CalendarDate, Nullable, NullableString, NullableTimestamp, StringEnum, Timestamp, findingSeverities,
  providers,
} from '../../domain/schema.js';

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


export const vulnerabilitySortFields = ['hasKev', 'hasExploit', 'lastObservedAt', 'firstObservedAt', 'severityLevelValue'] as const;
export type VulnerabilitySortField = (typeof vulnerabilitySortFields)[number];

const strings = (description: string, maxItems?: number) =>
  ({ kind: 'list', item: { type: 'string' }, description, ...(maxItems === undefined ? {} : { maxItems }) }) as const;
const bool = (description: string) => ({ kind: 'boolean', description }) as const;

export const listVulnerabilitiesQuery = defineQuery(
  {
    vulnerabilityIds: strings('Vulnerability ids (CVE style).', 100),
    assetIds: strings('Asset ids.', 10),
    providers: { kind: 'list', item: { type: 'enum', values: providers }, description: 'The finding\'s provider.' },
    executionIds: strings('The finding\'s execution ids (strings).', 10),
    integrationIds: strings('The finding\'s integration ids.', 10),
    assetGroupIds: strings('Groups of the finding\'s asset.'),
    environmentIds: { kind: 'list', item: { type: 'environment' }, description: 'Environment UUIDs and/or production, non-production (through the finding\'s integration).' },
    packageName: { kind: 'string', description: 'A package of the finding has this name (exact).' },
    regions: strings('Regions of the finding\'s asset.'),
    targetName: { kind: 'string', description: 'A package of the finding has this target name (exact).' },
    targetType: { kind: 'string', description: 'A package of the finding has this target type (exact).' },
    targetClass: strings('A package of the finding has one of these target classes.'),
    hasKev: bool('Findings listed (true) or not (false) in the known exploited vulnerabilities catalog.'),
    isExempted: { kind: 'boolean', default: false, description: 'false (default): only findings no exemption matches; true: only exempted findings.' },
    isExploitable: bool('Findings whose imported isExploitable attribute (absent means false) is this value.'),
    hasExploit: bool('Findings referenced (true) or not (false) in a public exploit database.'),
    hasVendorFix: bool('Findings where any package has (true) or none has (false) a non-empty fixedVersion.'),
    severityLevels: { kind: 'list', item: { type: 'enum', values: findingSeverities }, description: 'Finding severities.' },
    firstObservedAtStart: { kind: 'datetime', description: 'Inclusive start of the firstObservedAt range.' },
    firstObservedAtEnd: { kind: 'datetime', description: 'Inclusive end of the firstObservedAt range.' },
    sortBy: { kind: 'enum', values: vulnerabilitySortFields, default: 'severityLevelValue', description: 'Sort key; ties by (assetId, vulnerabilityId) in the same direction.' },
    sortOrder: { kind: 'enum', values: ['ASC', 'DESC'], default: 'DESC', description: 'Sort direction (applies to the default key without sortBy).' },
    page: { kind: 'integer', min: 1, max: 1_000_000, default: 1, description: 'Page number, an integer from 1 to 1000000 (default 1). A page past the end answers an empty `data` with the true `total`.' },
    perPage: { kind: 'integer', min: 1, max: 2000, default: 100, description: 'Page size, an integer from 1 to 2000 (default 100).' },
  },
  { ranges: [['firstObservedAtStart', 'firstObservedAtEnd']] },
);
export type ListVulnerabilitiesQuery = ReturnType<typeof listVulnerabilitiesQuery.parse>;

// ---- OpenAPI documentation of the vulnerability list (see src/http/docs.ts) ----

export const ListVulnerabilitiesResponse = Type.Object({
  data: Type.Array(ref('Vulnerability'), { description: 'The findings of this page' }),
  meta: ref('PageMeta'),
});

export const vulnerabilityExample: Vulnerability = {
  schemaVersion: '2024-06-01',
  assetId: 'sirn:assets:4f10d8f8-7ac2-44e9-abd3-e1482e23fdff:aws:ec2:instance:us-east-2:i-07b1e1016f9ae97f0',
  organizationId: 'fbf18ba2-f01c-43b9-b220-d8d587f4d3e2',
  tenantId: '810a0c5d-53f7-4e56-a0f7-8684cd06a7ac',
  integrationId: '6850935f-d658-412c-bd99-804d7616d1d2',
  vulnerabilityId: 'CVE-2023-19404',
  provider: 'AWS',
  assetType: 'AWS::EC2::Instance',
  description: 'An improper certificate validation flaw was found in ncurses in terminfo parsing. This issue is fixed in version 6.4-4+deb12u1.',
  title: 'ncurses: improper certificate validation in terminfo parsing',
  severityLevel: 'HIGH',
  severityLevelValue: 4,
  severitySource: 'nvd',
  firstObservedAt: '2025-12-13T11:19:07.310Z',
  lastObservedAt: '2026-10-31T04:40:03.527Z',
  publishedDate: '2023-06-18T17:56:07.446Z',
  executionId: '1793419268459',
  targetName: 'checkout-cron-prod-12',
  primaryUrl: 'https://avd.aquasec.com/nvd/cve-2023-19404',
  packages: [{
    packageName: 'ncurses', targetName: 'checkout-cron-prod-12 (ubuntu 22.04)', targetType: 'ubuntu', targetPath: 'var/lib/dpkg/status',
    targetClass: 'os-pkgs', fixedVersion: '6.4-4+deb12u1', installedVersion: '6.4-4',
  }],
  cwes: [{
    id: 'CWE-295', name: 'Improper Certificate Validation', cweId: '295', source: 'NVD',
    sourceUrl: 'https://cwe.mitre.org/data/definitions/295.html',
    description: 'The product does not validate, or incorrectly validates, a certificate.',
  }],
  hasKev: true,
  hasExploit: false,
  hasVendorFix: true,
  knownExploit: {
    cveID: 'CVE-2023-19404', notes: null, product: 'ncurses', vendorProject: 'GNU', requiredAction: 'Apply updates per vendor instructions.',
    shortDescription: 'ncurses contains an improper certificate validation vulnerability.', vulnerabilityName: 'GNU ncurses Improper Certificate Validation',
    dueDate: '2024-02-05', dateAdded: '2024-01-15',
  },
  exploits: [],
  isExploitable: true,
  exemptions: [{
    exemptionId: '3f6c2d1e-8b7a-4c5d-9e0f-1a2b3c4d5e6f',
    exemption: {
      name: 'Accepted on build hosts', reason: 'RISK_ACCEPTED', createdAt: '2026-02-01T09:00:00.000Z', updatedAt: '2026-02-01T09:00:00.000Z',
      rules: [{
        exemptionType: 'VULNERABILITY', vulnerabilityId: 'CVE-2023-19404', vulnerabilityIds: null, assetIds: null, assetGroupIds: null,
        assetRegions: ['us-east-2'], assetTags: null, noVendorFix: false,
      }],
    },
  }],
};

/** A page of `isExempted=true`: the exempted findings, each with the exemptions that match it. */
export const listVulnerabilitiesExample = {
  data: [vulnerabilityExample],
  meta: { page: 1, perPage: 1, total: 3, hasNextPage: true, hasPreviousPage: false },
};

queryExamples(listVulnerabilitiesQuery, {
  vulnerabilityIds: 'CVE-2023-19404,CVE-2024-3094',
  severityLevels: 'CRITICAL,HIGH',
  hasKev: 'true',
  isExempted: 'true',
  packageName: 'openssl',
  targetClass: 'os-pkgs,lang-pkgs',
  environmentIds: 'production',
  regions: 'us-east-1',
  firstObservedAtStart: '2026-01-01T00:00:00Z',
  sortBy: 'lastObservedAt',
  sortOrder: 'DESC',
  page: '1',
  perPage: '500',
});
