// Filter pieces shared by the list operations: plain column filters declared as tables, and the semi-joins through
// a record's integration (environments) and asset (group membership).
import { sql, type Expression, type ExpressionBuilder, type Kysely, type SqlBool } from 'kysely';
import { fromTenant } from '../tx/tenant.js';
import type { Database } from '../db/tables.js';

/** How a query's plain parameters map to columns (qualified where a subquery could make them ambiguous). */
export interface ColumnFilters {
  /** List parameters: the column is one of the items. */
  lists?: Record<string, string>;
  /** Boolean parameters on 0/1 columns. */
  flags?: Record<string, string>;
  /** Inclusive ranges: `[startParam, endParam, column]`. */
  ranges?: readonly (readonly [string, string, string])[];
}

export function columnFilters<T extends keyof Database>(
  eb: ExpressionBuilder<Database, T>,
  query: object,
  filters: ColumnFilters,
): Expression<SqlBool>[] {
  const q = query as Record<string, unknown>;
  const where: Expression<SqlBool>[] = [];
  for (const [param, column] of Object.entries(filters.lists ?? {})) {
    const items = q[param];
    if (Array.isArray(items)) where.push(eb(sql.ref(column), 'in', items));
  }
  for (const [param, column] of Object.entries(filters.flags ?? {})) {
    const value = q[param];
    // A literal, not a parameter: SQLite uses an index built for `flag = 1` (a partial index, docs/DESIGN.md §63)
    // only when the statement's own text says so.
    if (typeof value === 'boolean') where.push(eb(sql.ref(column), '=', sql.lit(value ? 1 : 0)));
  }
  for (const [start, end, column] of filters.ranges ?? []) {
    if (q[start] !== undefined) where.push(eb(sql.ref(column), '>=', q[start]));
    if (q[end] !== undefined) where.push(eb(sql.ref(column), '<=', q[end]));
  }
  return where;
}

/**
 * The keys of the tenant's records of these kinds (`asset`, `finding`, `risk`) with a change committed at or after
 * `since`, for `updatedSince` (pipeline.md §4): read on the log's (tenant, at) index, so it costs the changes since then,
 * whatever the size of the list.
 */
export function changedSince<T extends keyof Database>(
  eb: ExpressionBuilder<Database, T>,
  tenantId: string,
  since: string,
  kinds: readonly ('asset' | 'finding' | 'risk')[],
) {
  const db = eb as unknown as Kysely<Database>;
  return fromTenant(db, 'changes', tenantId)
    .where('changes.at', '>=', since)
    .where((c) => c.or(kinds.map((kind) => c('changes.type', 'like', `${kind}.%`))));
}

/** assetGroupIds: the record's asset is a member of one of the groups (an unknown group matches nothing). */
export function groupMemberFilter<T extends keyof Database>(
  eb: ExpressionBuilder<Database, T>,
  tenantId: string,
  groupIds: readonly string[],
  assetId: Expression<string>,
): Expression<SqlBool> {
  // An ExpressionBuilder can start subqueries like a Kysely instance; fromTenant only needs selectFrom.
  const db = eb as unknown as Kysely<Database>;
  return eb.exists(
    fromTenant(db, 'asset_group_members', tenantId)
      .select(sql.lit(1).as('one'))
      .where('asset_group_members.asset_id', '=', assetId)
      .where('asset_group_members.asset_group_id', 'in', groupIds),
  );
}

/**
 * environmentIds: a record's environment is that of its own integration; UUIDs match case-insensitively,
 * production / non-production match the flag. Written as a correlated EXISTS rather than `integration_id IN (…)`: an
 * IN list steers the planner to the integration index and a sort of every record of those integrations, while EXISTS
 * lets the sort index drive and stop after one page.
 */
export function environmentFilter<T extends keyof Database>(
  eb: ExpressionBuilder<Database, T>,
  tenantId: string,
  items: readonly string[],
  integrationId: Expression<string | null>,
): Expression<SqlBool> {
  const ids = items.filter((i) => i !== 'production' && i !== 'non-production');
  const flags = [items.includes('production') ? 1 : null, items.includes('non-production') ? 0 : null].filter(
    (f) => f !== null,
  );
  // An ExpressionBuilder can start subqueries like a Kysely instance; fromTenant only needs selectFrom.
  const db = eb as unknown as Kysely<Database>;
  const environments = fromTenant(db, 'environments', tenantId)
    .select('environments.environment_id')
    .where((e) =>
      e.or([
        ...(ids.length > 0 ? [e('environments.environment_id_lc', 'in', ids)] : []),
        ...(flags.length > 0 ? [e('environments.is_production', 'in', flags)] : []),
      ]),
    );
  return eb.exists(
    fromTenant(db, 'integrations', tenantId)
      .select(sql.lit(1).as('one'))
      .where('integrations.integration_id', '=', integrationId)
      .where('integrations.environment_id', 'in', environments),
  );
}
