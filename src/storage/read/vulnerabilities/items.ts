// A finding as the API serves it: its stored document with its intel and its exemptions spliced over the closing brace
// (docs/DESIGN.md §44). For a page's findings, and for a change log's finding records.
import type { Kysely } from 'kysely';
import { NO_INTEL_JSON } from '../../../domain/intel.js';
import { isOverdue } from '../../../domain/remediation.js';
import { appendTo } from '../../../lib/collections.js';
import { fromTenant } from '../../tx/tenant.js';
import type { SqlDialect } from '../../db/dialect.js';
import type { Database } from '../../db/tables.js';
import { storedFindings, type FindingKey, type StoredFinding } from './documents.js';

/** The end of a finding without intel that no exemption matches (most of them), up to its due date. */
const PLAIN_END = `,${NO_INTEL_JSON.slice(1, -1)},"exemptions":[]`;

/** The extra fields of remediation (pipeline.md §6): the due date, and whether it is past at `now`. */
const dueFields = (due: string | null, exempted: boolean, now: string): string =>
  `,"dueAt":${due === null ? 'null' : JSON.stringify(due)},"isOverdue":${isOverdue(due, exempted, now)}}`;

const key = (assetId: string, vulnerabilityId: string) => `${assetId}\u0000${vulnerabilityId}`;

/** The served JSON of each finding, in the order given. */
export async function findingItems(
  db: Kysely<Database>,
  tenantId: string,
  rows: readonly StoredFinding[],
): Promise<Buffer[]> {
  const exemptionsOf = new Map<string, string[]>();
  const exemptedAssets = [...new Set(rows.filter((k) => k.is_exempted === 1).map((k) => k.asset_id))];
  if (exemptedAssets.length > 0) {
    const matches = await fromTenant(db, 'vulnerability_exemptions', tenantId)
      .select(['vulnerability_exemptions.asset_id', 'vulnerability_exemptions.vulnerability_id', 'exemption_id'])
      .where('vulnerability_exemptions.asset_id', 'in', exemptedAssets)
      .orderBy('exemption_id')
      .execute();
    for (const m of matches) appendTo(exemptionsOf, key(m.asset_id, m.vulnerability_id), m.exemption_id);
  }
  const exemptionIds = [...new Set([...exemptionsOf.values()].flat())];
  const exemptionDocs = new Map<string, string>();
  if (exemptionIds.length > 0) {
    const found = await fromTenant(db, 'exemptions', tenantId)
      .select(['exemptions.exemption_id', 'doc'])
      .where('exemptions.exemption_id', 'in', exemptionIds)
      .execute();
    for (const row of found) exemptionDocs.set(row.exemption_id, row.doc);
  }
  const now = new Date().toISOString();
  return rows.map(({ asset_id, vulnerability_id, doc, intel, due_at, is_exempted }) => {
    const matched = exemptionsOf.size === 0 ? undefined : exemptionsOf.get(key(asset_id, vulnerability_id));
    const due = dueFields(due_at, is_exempted === 1, now);
    const tail = Buffer.from(
      matched === undefined && intel === null
        ? PLAIN_END + due
        : `,${(intel ?? NO_INTEL_JSON).slice(1, -1)},"exemptions":[${(matched ?? []).map((id) => `{"exemptionId":${JSON.stringify(id)},"exemption":${exemptionDocs.get(id)}}`).join(',')}]${due}`,
    );
    // The document, then its intel and exemptions over its closing brace: one buffer, written once.
    const length = Buffer.byteLength(doc);
    const item = Buffer.allocUnsafe(length - 1 + tail.length);
    item.write(doc, 0);
    tail.copy(item, length - 1);
    return item;
  });
}

/** The served JSON of the findings of `keys` that exist, by their key (`assetId` U+0000 `vulnerabilityId`). */
export async function findingsByKey(
  db: Kysely<Database>,
  dialect: SqlDialect,
  tenantId: string,
  keys: readonly FindingKey[],
): Promise<Map<string, Buffer>> {
  const rows = await storedFindings(db, dialect, tenantId, keys);
  const items = await findingItems(db, tenantId, rows);
  return new Map(rows.map((row, i) => [key(row.asset_id, row.vulnerability_id), items[i]!]));
}

export { key as findingKey };
