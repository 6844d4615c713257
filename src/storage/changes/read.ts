// Reads of the change log (pipeline.md §4): a page of a tenant's changes after a position, each with the record it is
// about as the API serves it now (its stored record for one that left), and the position a client asks from next.
import { sql, type Kysely } from 'kysely';
import { changedFields, type ChangedField } from '../../domain/changes.js';
import type { SqlDialect } from '../db/dialect.js';
import type { Database } from '../db/tables.js';
import { assetDocuments, assetJson } from '../read/assets/documents.js';
import { findingKey, findingsByKey } from '../read/vulnerabilities/items.js';
import { fromTenant } from '../tx/tenant.js';
import type { TenantReader } from '../tx/read.js';
import type { ChangePage, Storage } from '../types.js';
import { assetOf, findingOf, riskOf } from './states.js';

type Row = Database['changes'];

/** The tracked fields a change moved, from the states it holds. */
function fieldsOf(row: Row): ChangedField[] {
  if (row.before === null || row.after === null) return [];
  const kind = row.type.slice(0, row.type.indexOf('.'));
  const decode = kind === 'finding' ? findingOf : kind === 'asset' ? assetOf : riskOf;
  return changedFields<object>(decode(row.before), decode(row.after));
}

/** The records the changes are about, as served now, by kind and key; a record that no longer exists is missing. */
async function currentRecords(db: Kysely<Database>, dialect: SqlDialect, tenantId: string, rows: readonly Row[]) {
  const wanted = rows.filter((r) => r.record === null);
  const assetIds = [...new Set(wanted.filter((r) => r.type.startsWith('asset.')).map((r) => r.asset_id!))];
  const riskIds = [...new Set(wanted.filter((r) => r.type.startsWith('risk.')).map((r) => r.risk_id!))];
  const findings = wanted
    .filter((r) => r.type.startsWith('finding.'))
    .map((r) => ({ asset_id: r.asset_id!, vulnerability_id: r.vulnerability_id! }));
  const assets = new Map(
    [...(await assetDocuments(db, tenantId, assetIds))].map(([id, row]) => [id, assetJson(row, row.doc)]),
  );
  const risks = new Map<string, Buffer>();
  if (riskIds.length > 0)
    for (const r of await fromTenant(db, 'risks', tenantId)
      .select(['risks.id', 'risks.doc'])
      .where('risks.id', 'in', riskIds)
      .execute())
      risks.set(r.id, r.doc);
  return { assets, risks, findings: await findingsByKey(db, dialect, tenantId, findings) };
}

const NULL = Buffer.from('null');

/** Each change's API JSON (pipeline.md §4), in the order of the rows: the record as served now, or as it left. */
export async function changeItems(
  db: Kysely<Database>,
  dialect: SqlDialect,
  tenantId: string,
  rows: readonly Row[],
): Promise<Buffer[]> {
  const records = await currentRecords(db, dialect, tenantId, rows);
  return rows.map((r) => {
    const record =
      r.record !== null
        ? Buffer.from(r.record)
        : r.type.startsWith('asset.')
          ? records.assets.get(r.asset_id!)
          : r.type.startsWith('risk.')
            ? records.risks.get(r.risk_id!)
            : records.findings.get(findingKey(r.asset_id!, r.vulnerability_id!));
    const head = JSON.stringify({
      seq: String(r.seq),
      at: r.at,
      type: r.type,
      assetId: r.asset_id,
      vulnerabilityId: r.vulnerability_id,
      riskId: r.risk_id,
      cause: JSON.parse(r.cause) as unknown,
      fields: fieldsOf(r),
    });
    return Buffer.concat([Buffer.from(`${head.slice(0, -1)},"record":`), record ?? NULL, Buffer.from('}')]);
  });
}

export function changeStore(read: TenantReader, dialect: SqlDialect): Pick<Storage, 'listChanges'> {
  return {
    listChanges: (scope, query, after) =>
      read(scope.tenantId, async (db): Promise<ChangePage> => {
        const tenant = await db
          .selectFrom('tenants')
          .select(['change_seq', 'changes_pruned_seq'])
          .where('tenant_id', '=', scope.tenantId)
          .executeTakeFirst();
        const head = Number(tenant?.change_seq ?? 0);
        const pruned = Number(tenant?.changes_pruned_seq ?? 0);
        if (after !== undefined && after < pruned) return { gone: true, items: [], position: after, head };
        let from = after ?? 0;
        if (query.since !== undefined) {
          const first = await sql<{ seq: number | string | null }>`select min(c.seq) as seq from changes as c
            where c.tenant_id = ${scope.tenantId} and c.at >= ${query.since}`.execute(db);
          const seq = first.rows[0]?.seq;
          from = Math.max(from, seq === null || seq === undefined ? head : Number(seq) - 1);
        }
        let page = fromTenant(db, 'changes', scope.tenantId).selectAll().where('changes.seq', '>', from);
        if (query.scanId !== undefined) page = page.where('changes.scan_id', '=', query.scanId);
        if (query.types !== undefined) page = page.where('changes.type', 'in', query.types);
        if (query.assetIds !== undefined) page = page.where('changes.asset_id', 'in', query.assetIds);
        if (query.vulnerabilityIds !== undefined)
          page = page.where('changes.vulnerability_id', 'in', query.vulnerabilityIds);
        if (query.riskIds !== undefined) page = page.where('changes.risk_id', 'in', query.riskIds);
        const rows = (await page.orderBy('changes.seq').limit(query.perPage).execute()).map((r) => ({
          ...r,
          seq: Number(r.seq),
        }));
        const items = await changeItems(db, dialect, scope.tenantId, rows);
        // A full page goes on from its last change; a short one read everything there is: the next read starts at the
        // head of the log as this snapshot saw it, past any changes the filters did not select.
        const last = rows[rows.length - 1];
        const position = rows.length === query.perPage && last !== undefined ? last.seq : Math.max(from, head);
        return { gone: false, items, position, head };
      }),
  };
}
