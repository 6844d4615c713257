// The records of the export tests (more findings, assets and risks than an export reads at once, text that CSV must
// quote or a spreadsheet would run) and the readers of what an export sends.
import { parse } from 'csv-parse/sync';
import { expect } from 'vitest';
import { EXPORT_BATCH } from '../../src/http/export.js';
import { TENANT_A } from '../helpers.js';
import { ALL_A, fixture, riskFixture, uuidOf } from '../fixtures.js';
import type { ImportRecord } from '../records.js';

export type Item = Record<string, unknown>;
const SEVERITIES = ['CRITICAL', 'HIGH', 'MEDIUM', 'LOW', 'INFORMATIONAL', 'UNKNOWN'];
/** More findings than an export reads at once, so that exports cross batch boundaries. */
export const FINDINGS = EXPORT_BATCH * 2 + 137;
export const RISKS = EXPORT_BATCH + 59;
export const ASSETS = EXPORT_BATCH + 41;

/** Text that a spreadsheet would run as a formula, and text that CSV must quote. */
export const HOSTILE = [
  '=HYPERLINK("http://x","y")',
  '+1+2',
  '-2+3',
  '@SUM(A1)',
  '\tcmd',
  '\rcmd',
  'a,b "c"\nd',
  'ünï ✓',
];

export const records: ImportRecord[] = [
  ...fixture,
  ...riskFixture,
  ...Array.from({ length: FINDINGS }, (_, i): ImportRecord => [
    'vulnerability',
    {
      tenantId: TENANT_A,
      assetId: ALL_A[i % ALL_A.length],
      vulnerabilityId: `CVE-2025-${String(i).padStart(5, '0')}`,
      severityLevel: SEVERITIES[i % SEVERITIES.length],
      hasKev: i % 7 === 0,
      title: HOSTILE[i % HOSTILE.length],
      packages: i % 5 === 0 ? [{ packageName: 'openssl', fixedVersion: i % 10 === 0 ? '3.0.9' : null }] : [],
      firstObservedAt: `2025-0${1 + (i % 9)}-01T00:00:00Z`,
      lastObservedAt: '2025-10-01T00:00:00Z',
    },
  ]),
  [
    'exemption',
    {
      tenantId: TENANT_A,
      exemptionId: uuidOf(1),
      exemption: {
        name: 'openssl accepted',
        reason: 'RISK_ACCEPTED',
        rules: [{ vulnerabilityIds: ['CVE-2025-00005'] }],
      },
    },
  ],
  // Assets with and without the nullable sort values, so that the nulls-last segment starts inside a batch.
  ...Array.from({ length: ASSETS }, (_, i): ImportRecord => [
    'asset',
    {
      tenantId: TENANT_A,
      id: `sirn:assets:gen:aws:s3:bucket:eu-west-${i % 3}:bucket-${String(i).padStart(5, '0')}`,
      provider: i % 4 === 0 ? 'GCP' : 'AWS',
      type: 'AWS::S3::Bucket',
      name: i % 5 === 0 ? null : HOSTILE[i % HOSTILE.length],
      region: i % 7 === 0 ? null : `eu-west-${i % 3}`,
      riskScore: i % 3 === 0 ? null : (i % 11) / 2,
      tags: i % 2 === 0 ? [{ Key: 'team', Value: 'a,b' }] : [],
      firstObservedAt: `2025-0${1 + (i % 9)}-01T00:00:00Z`,
      lastObservedAt: '2025-10-01T00:00:00Z',
    },
  ]),
  ...Array.from({ length: RISKS }, (_, i): ImportRecord => [
    'risk',
    {
      tenantId: TENANT_A,
      id: `risk-x-${String(i).padStart(5, '0')}`,
      riskTypeId: 'generated',
      primaryAssetId: ALL_A[i % ALL_A.length],
      severityLevel: SEVERITIES[i % 4],
      lifecycleState: 'OPEN',
      description: HOSTILE[i % HOSTILE.length],
      discoveredAt: `2025-0${1 + (i % 9)}-1${i % 10}T00:00:00Z`,
      score: (i % 100) / 10,
    },
  ]),
];

export const join = (path: string, query: string, extra: string) =>
  `${path}?${[query, extra].filter((part) => part !== '').join('&')}`;

/** What a CSV cell holds for a JSON value: text as is (formula-like text behind a '), JSON for objects and arrays. */
export const cell = (value: unknown): string => {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
};

export const ndjsonItems = (body: string): Item[] => {
  if (body !== '') expect(body.endsWith('\n')).toBe(true);
  return body
    .slice(0, -1)
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Item);
};

export const csvRows = (raw: Buffer): string[][] => {
  // A UTF-8 byte order mark, so spreadsheets read the file as UTF-8; CRLF between records (RFC 4180).
  expect([...raw.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
  expect(raw.toString('utf8')).toMatch(/^\uFEFF[^\n]*\r\n/);
  const rows: string[][] = parse(raw, { bom: true, relaxColumnCount: false });
  return rows;
};
