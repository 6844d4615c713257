// What the writer stores for one finding: its row, its document, its packages' and its aliases' rows. Built here once,
// for the write (src/storage/write/rows/finding-batch.ts) and for telling whether writing a finding again would change
// what is stored (src/storage/write/compare.ts), so that a column the write gains is compared too.
import type { Insertable } from 'kysely';
import { intelKeys, storedIntel, type Intel } from '../../../domain/intel.js';
import { findingDocument, type FindingColumns, type VulnerabilityRecord } from '../../../domain/records.js';
import { dueAt } from '../../../domain/remediation.js';
import type { VulnerabilityPackageTable, VulnerabilityTable } from '../../db/tables.js';

const flag = (value: boolean): number => (value ? 1 : 0);

/**
 * A finding's row. `v` is the record's finding with the loaded feeds' intel joined (`intel`, `has_kev`, `has_exploit`
 * follow from it, and with the tenant's SLA days by severity value, `due_at`), `own` the intel its own file gave.
 */
export function findingRow(
  record: VulnerabilityRecord,
  v: FindingColumns,
  own: Intel | null,
  id: number,
  sla: readonly (number | undefined)[],
): Insertable<VulnerabilityTable> {
  return {
    tenant_id: record.tenantId,
    asset_id: v.assetId,
    vulnerability_id: v.vulnerabilityId,
    source: record.source ?? null,
    integration_id: v.integrationId,
    execution_id: v.executionId,
    provider: v.provider,
    severity_level_value: v.severityLevelValue,
    has_kev: flag(v.hasKev),
    has_exploit: flag(v.hasExploit),
    is_exploitable: flag(v.isExploitable),
    has_vendor_fix: flag(v.hasVendorFix),
    // Recomputed before commit for every finding of a touched asset.
    is_exempted: 0,
    first_observed_at: v.firstObservedAt,
    last_observed_at: v.lastObservedAt,
    intel: storedIntel(v),
    own_intel: own === null ? null : JSON.stringify(own),
    due_at: dueAt(v.firstObservedAt, sla[v.severityLevelValue], v.knownExploit?.dueDate),
    id,
  };
}

/**
 * Columns of the row that the record alone does not decide: the key, the id, the exemption flag (settled from the
 * stored exemptions), the feeds' intel (the same own intel and aliases under the same feeds give the same) and the due
 * date (the same severity, first observation and intel under the tenant's SLA give the same; a new SLA rewrites it).
 */
export const NOT_THE_RECORDS: ReadonlySet<string> = new Set([
  'tenant_id',
  'asset_id',
  'vulnerability_id',
  'id',
  'is_exempted',
  'has_kev',
  'has_exploit',
  'intel',
  'due_at',
]);

/** The stored document: the record's own, whichever feeds joined it (the intel is kept apart from it). */
export const findingDocumentBytes = (record: VulnerabilityRecord): Buffer => {
  const doc = record.document ?? findingDocument(record.vulnerability);
  // A Buffer over the bytes, not a copy: a document that came from another thread arrives as a plain Uint8Array.
  return Buffer.from(doc.buffer, doc.byteOffset, doc.byteLength);
};

/** The finding's aliases as stored: its other ids, upper-cased, each once, not its own id. */
export const findingAliases = ({ vulnerability: v, aliases }: VulnerabilityRecord): string[] =>
  intelKeys(v.vulnerabilityId, aliases).filter((alias) => alias !== v.vulnerabilityId);

/** The columns of a package's row. */
export const PACKAGE_COLUMNS = [
  'tenant_id',
  'asset_id',
  'vulnerability_id',
  'position',
  'package_name',
  'target_name',
  'target_type',
  'target_class',
  'purl',
] as const satisfies readonly (keyof VulnerabilityPackageTable)[];

/** The finding's packages' rows, in `PACKAGE_COLUMNS`' order, by position. */
export const findingPackages = ({ tenantId, vulnerability: v, purls }: VulnerabilityRecord): unknown[][] =>
  v.packages.map((p, position) => [
    tenantId,
    v.assetId,
    v.vulnerabilityId,
    position,
    p.packageName,
    p.targetName,
    p.targetType,
    p.targetClass,
    purls?.[position] ?? null,
  ]);
