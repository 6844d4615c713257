// HTTP side of the vulnerability list: its query parser, response schema and the examples of the OpenAPI document. The
// record and its query vocabulary live in src/domain/vulnerabilities.ts.
import { Type } from 'typebox';
import { listVulnerabilitiesSpec, type Vulnerability } from '../../domain/vulnerabilities.js';
import { defineQuery } from '../../http/query.js';
import { queryExamples, ref } from '../../http/docs.js';
import { PageMeta } from '../assets/schemas.js';

export type { ListVulnerabilitiesQuery } from '../../domain/vulnerabilities.js';

export const listVulnerabilitiesQuery = defineQuery(listVulnerabilitiesSpec);

// ---- OpenAPI documentation of the vulnerability list (see src/http/docs.ts) ----

const nextCursor = Type.Union([Type.String(), Type.Null()], {
  description:
    'Pass it as `cursor` (with the same filters and sort) for the findings after this page or batch; `null` on the last',
});

export const FindingPageMeta = Type.Object(
  { ...PageMeta.properties, cursor: nextCursor },
  { description: 'A numbered page (no `cursor` given, `includeTotal` true): its position, the total and the cursor' },
);

export const FindingBatchMeta = Type.Object(
  { perPage: Type.Integer({ description: 'The batch size of this response' }), cursor: nextCursor },
  { description: 'A batch after a `cursor`, or any page with `includeTotal=false`: no count is made' },
);

export const ListVulnerabilitiesResponse = Type.Object({
  data: Type.Array(ref('Vulnerability'), { description: 'The findings of this page' }),
  meta: Type.Union([ref('FindingPageMeta'), ref('FindingBatchMeta')]),
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
  description:
    'An improper certificate validation flaw was found in ncurses in terminfo parsing. This issue is fixed in version 6.4-4+deb12u1.',
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
  packages: [
    {
      packageName: 'ncurses',
      targetName: 'checkout-cron-prod-12 (ubuntu 22.04)',
      targetType: 'ubuntu',
      targetPath: 'var/lib/dpkg/status',
      targetClass: 'os-pkgs',
      fixedVersion: '6.4-4+deb12u1',
      installedVersion: '6.4-4',
    },
  ],
  cwes: [
    {
      id: 'CWE-295',
      name: 'Improper Certificate Validation',
      cweId: '295',
      source: 'NVD',
      sourceUrl: 'https://cwe.mitre.org/data/definitions/295.html',
      description: 'The product does not validate, or incorrectly validates, a certificate.',
    },
  ],
  hasKev: true,
  hasExploit: false,
  hasVendorFix: true,
  knownExploit: {
    cveID: 'CVE-2023-19404',
    notes: null,
    product: 'ncurses',
    vendorProject: 'GNU',
    requiredAction: 'Apply updates per vendor instructions.',
    shortDescription: 'ncurses contains an improper certificate validation vulnerability.',
    vulnerabilityName: 'GNU ncurses Improper Certificate Validation',
    dueDate: '2024-02-05',
    dateAdded: '2024-01-15',
  },
  exploits: [],
  isExploitable: true,
  exemptions: [
    {
      exemptionId: '3f6c2d1e-8b7a-4c5d-9e0f-1a2b3c4d5e6f',
      exemption: {
        name: 'Accepted on build hosts',
        reason: 'RISK_ACCEPTED',
        createdAt: '2026-02-01T09:00:00.000Z',
        updatedAt: '2026-02-01T09:00:00.000Z',
        rules: [
          {
            exemptionType: 'VULNERABILITY',
            vulnerabilityId: 'CVE-2023-19404',
            vulnerabilityIds: null,
            assetIds: null,
            assetGroupIds: null,
            assetRegions: ['us-east-2'],
            assetTags: null,
            noVendorFix: false,
          },
        ],
      },
    },
  ],
  dueAt: '2024-02-05T23:59:59.999Z',
  isOverdue: false,
};

/** A page of `isExempted=true`: the exempted findings, each with the exemptions that match it. */
export const listVulnerabilitiesExample = {
  data: [vulnerabilityExample],
  meta: {
    page: 1,
    perPage: 1,
    total: 3,
    hasNextPage: true,
    hasPreviousPage: false,
    cursor: 'WzEsNCwic2lybjphc3NldHM6NGYxMGQ4ZjgiLCJDVkUtMjAyMy0xOTQwNCJd.mD3vYq3f0u7Rz8xk2sB1Aw',
  },
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
