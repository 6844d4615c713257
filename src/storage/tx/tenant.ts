// The tenant wall of every query: a tenant table is read only with its tenant's predicate, from the first clause.
import { sql, type Kysely, type SelectQueryBuilder } from 'kysely';
import type { Database, TENANT_TABLES } from '../db/tables.js';

type TenantTableName = (typeof TENANT_TABLES)[number];

/**
 * The only way storage reads a tenant table: the tenant predicate is part of the query from its first clause, so no
 * query over tenant data can be built without it.
 */
export function fromTenant<T extends TenantTableName>(
  db: Kysely<Database>,
  table: T,
  tenantId: string,
): SelectQueryBuilder<Database, T, object> {
  // Widened to the union: Kysely cannot pick its selectFrom overload for a generic table name.
  const name: TenantTableName = table;
  return db.selectFrom(name).where(sql.ref(`${table}.tenant_id`), '=', tenantId);
}

/** The tenant's data version as this transaction sees it (-1 for no such tenant). */
export const dataVersion = async (db: Kysely<Database>, tenantId: string): Promise<number> =>
  (await tenantState(db, tenantId)).version;

/**
 * The tenant's data version and change-log position as this transaction sees them, in one statement: a list answer
 * files what it keeps under the version and tells its position (the `Secinv-Changes-Cursor` of pipeline.md §4).
 */
export async function tenantState(
  db: Kysely<Database>,
  tenantId: string,
): Promise<{ version: number; position: number }> {
  const row = await db
    .selectFrom('tenants')
    .select(['data_version', 'change_seq'])
    .where('tenant_id', '=', tenantId)
    .executeTakeFirst();
  return { version: Number(row?.data_version ?? -1), position: Number(row?.change_seq ?? 0) };
}
