// Reads of the change log (pipeline.md §4): a page of a tenant's changes after a position, each with the record it is
// about as the API serves it now (its stored record for one that left), and the position a client asks from next.
import { sql, type Kysely, type RawBuilder } from 'kysely';
import { changedFields, type ChangedField } from '../../domain/changes.js';
import type { SqlDialect } from '../db/dialect.js';
import type { Database } from '../db/tables.js';
import { assetDocuments, assetJson } from '../read/assets/documents.js';
import { documentOf, keyProbe, type StoredFinding } from '../read/vulnerabilities/documents.js';
import { findingItems } from '../read/vulnerabilities/items.js';
import { fromTenant } from '../tx/tenant.js';
import type { TenantReader } from '../tx/read.js';
import type { ChangePage, Storage } from '../types.js';
import { assetOf, findingOf, riskOf } from './states.js';

/** A change's row, with the finding it is about as stored now when the change holds no record of its own. */
export type ChangeRow = Database['changes'] & {
  f_exempted: number | null;
  f_intel: string | null;
  f_due: string | null;
  /** Null: no such finding now (or the change is not about one, or holds its record). */
  f_doc: string | null;
};

/**
 * The tenant's changes that `where` selects (over `changes as c`), in log order, each read beside its finding in the
 * same statement: the finding by its key as the change row is walked, where a second statement of 1,000 keys cost a
 * changes page as much again as its own rows.
 */
export async function changeRows(
  db: Kysely<Database>,
  dialect: SqlDialect,
  tenantId: string,
  where: RawBuilder<unknown>,
  limit?: number,
): Promise<ChangeRow[]> {
  const doc = documentOf(tenantId, 'v', (column) => dialect.document(column));
  const columns = sql`v.is_exempted as f_exempted, v.intel as f_intel, v.due_at as f_due, ${doc} as f_doc`;
  const byKey = sql`v.tenant_id = ${tenantId} and v.asset_id = c.asset_id and v.vulnerability_id = c.vulnerability_id
    and c.record is null`;
  const { rows } = await sql<ChangeRow>`select c.*, ${dialect.name === 'sqlite' ? columns : sql`f.*`}
    from changes as c ${
      dialect.name === 'sqlite'
        ? sql`left join vulnerabilities as v on ${byKey}`
        : sql`left join lateral (select ${columns} from vulnerabilities as v where ${byKey} ${keyProbe('v')}) as f on true`
    }
    where c.tenant_id = ${tenantId} and ${where}
    order by c.seq ${limit === undefined ? sql`` : sql`limit ${limit}`}`.execute(db);
  return rows.map((r) => ({ ...r, seq: Number(r.seq) }));
}

/** The tracked fields a change moved, from the states it holds. */
function fieldsOf(row: ChangeRow): ChangedField[] {
  if (row.before === null || row.after === null) return [];
  const kind = row.type.slice(0, row.type.indexOf('.'));
  const decode = kind === 'finding' ? findingOf : kind === 'asset' ? assetOf : riskOf;
  return changedFields<object>(decode(row.before), decode(row.after));
}

/** The records the changes are about, as served now, by kind and key; a record that no longer exists is missing. */
async function currentRecords(db: Kysely<Database>, tenantId: string, rows: readonly ChangeRow[]) {
  const wanted = rows.filter((r) => r.record === null);
  const assetIds = [...new Set(wanted.filter((r) => r.type.startsWith('asset.')).map((r) => r.asset_id!))];
  const riskIds = [...new Set(wanted.filter((r) => r.type.startsWith('risk.')).map((r) => r.risk_id!))];
  const withFinding = wanted.filter((r) => r.f_doc !== null);
  const stored = withFinding.map((r): StoredFinding => ({
    asset_id: r.asset_id!,
    vulnerability_id: r.vulnerability_id!,
    is_exempted: r.f_exempted!,
    intel: r.f_intel,
    due_at: r.f_due,
    doc: r.f_doc!,
  }));
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
  const items = await findingItems(db, tenantId, stored);
  const findings = new Map(withFinding.map((r, i) => [r.seq, items[i]!]));
  return { assets, risks, findings };
}

const NULL = Buffer.from('null');

/** Each change's API JSON (pipeline.md §4), in the order of the rows: the record as served now, or as it left. */
export async function changeItems(
  db: Kysely<Database>,
  tenantId: string,
  rows: readonly ChangeRow[],
): Promise<Buffer[]> {
  const records = await currentRecords(db, tenantId, rows);
  return rows.map((r) => {
    const record =
      r.record !== null
        ? Buffer.from(r.record)
        : r.type.startsWith('asset.')
          ? records.assets.get(r.asset_id!)
          : r.type.startsWith('risk.')
            ? records.risks.get(r.risk_id!)
            : records.findings.get(r.seq);
    // The cause is stored as the JSON text it is served as (append.ts writes JSON.stringify of it).
    const head =
      `{"seq":"${r.seq}","at":${JSON.stringify(r.at)},"type":${JSON.stringify(r.type)},` +
      `"assetId":${JSON.stringify(r.asset_id)},"vulnerabilityId":${JSON.stringify(r.vulnerability_id)},` +
      `"riskId":${JSON.stringify(r.risk_id)},"cause":${r.cause},"fields":${JSON.stringify(fieldsOf(r))},"record":`;
    // Written once into one buffer, as findingItems does, without Buffer.concat's copies (docs/BENCHMARKS.md).
    const body = record ?? NULL;
    const length = Buffer.byteLength(head);
    const item = Buffer.allocUnsafe(length + body.length + 1);
    item.write(head, 0);
    body.copy(item, length);
    item[item.length - 1] = 0x7d; // }
    return item;
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
        const where = [sql`c.seq > ${from}`];
        if (query.scanId !== undefined) where.push(sql`c.scan_id = ${query.scanId}`);
        const among = (column: string, values: readonly string[] | undefined) =>
          values !== undefined && where.push(sql`${sql.ref(`c.${column}`)} in (${sql.join(values)})`);
        among('type', query.types);
        among('asset_id', query.assetIds);
        among('vulnerability_id', query.vulnerabilityIds);
        among('risk_id', query.riskIds);
        const rows = await changeRows(db, dialect, scope.tenantId, sql.join(where, sql` and `), query.perPage);
        const items = await changeItems(db, scope.tenantId, rows);
        // A full page goes on from its last change; a short one read everything there is: the next read starts at the
        // head of the log as this snapshot saw it, past any changes the filters did not select.
        const last = rows[rows.length - 1];
        const position = rows.length === query.perPage && last !== undefined ? last.seq : Math.max(from, head);
        return { gone: false, items, position, head };
      }),
  };
}
