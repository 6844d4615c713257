// Risk reads: keyset (seek) pages over (sort value, id), so a batch deep in the list costs what the first does, with
// the primary asset and integration of a whole batch fetched in one query each.
import type { Expression, ExpressionBuilder, Kysely, SqlBool } from 'kysely';
import type { ListRisksQuery } from '../../domain/risks.js';
import { assetDocuments, assetJson } from './assets/documents.js';
import { changedSince, columnFilters, environmentFilter, type ColumnFilters } from './filters.js';
import { countCache } from './count-cache.js';
import { fromTenant, tenantState } from '../tx/tenant.js';
import { type TenantReader } from '../tx/read.js';
import type { Database } from '../db/tables.js';
import type { RiskPosition, Storage } from '../types.js';

type Eb = ExpressionBuilder<Database, 'risks'>;
export type RiskFilters = Omit<
  ListRisksQuery,
  'sortBy' | 'sortOrder' | 'perPage' | 'cursor' | 'fields' | 'include' | 'format'
>;

const sortColumns = { discoveredAt: 'discovered_at', score: 'score' } as const;

const plainFilters: ColumnFilters = {
  lists: {
    ids: 'risks.id',
    riskTypeIds: 'risks.risk_type_id',
    integrationIds: 'risks.integration_id',
    primaryAssetIds: 'risks.primary_asset_id',
    severityLevels: 'risks.severity_level',
    lifecycleStates: 'risks.lifecycle_state',
    resourceTypes: 'risks.resource_type',
  },
  ranges: [['discoveredAtStart', 'discoveredAtEnd', 'risks.discovered_at']],
};

function filterExpressions(eb: Eb, tenantId: string, q: RiskFilters): Expression<SqlBool>[] {
  const where = columnFilters(eb, q, plainFilters);
  if (q.environmentIds) where.push(environmentFilter(eb, tenantId, q.environmentIds, eb.ref('risks.integration_id')));
  // A risk has no time of its own that moves: the time of its last change.
  if (q.updatedSince !== undefined)
    where.push(
      eb('risks.id', 'in', changedSince(eb, tenantId, q.updatedSince, ['risk']).select('changes.risk_id') as never),
    );
  return where;
}

export interface RiskRow {
  id: string;
  sortValue: string | number;
  doc: Buffer;
  primaryAssetId: string | null;
  integrationId: string | null;
  /** Present when requested: the asset's API JSON, or null when it is not in the inventory. */
  primaryAsset?: Buffer | null;
  integration?: Buffer | null;
}

/**
 * Mapper from a row to the risk's API JSON: the stored document, projected to `fields` when given (in schema order),
 * with the requested embeds appended.
 */
export function riskJson(row: RiskRow, fields: readonly string[] | undefined): Buffer {
  let base = row.doc;
  if (fields) {
    const doc = JSON.parse(row.doc.toString('utf8')) as Record<string, unknown>;
    base = Buffer.from(
      JSON.stringify(Object.fromEntries(Object.entries(doc).filter(([name]) => fields.includes(name)))),
    );
  }
  const embeds: Buffer[] = [];
  for (const name of ['primaryAsset', 'integration'] as const) {
    const value = row[name];
    if (value !== undefined) embeds.push(Buffer.from(`"${name}":`), value ?? Buffer.from('null'));
  }
  if (embeds.length === 0) return base;
  const parts: Buffer[] = [base.subarray(0, base.length - 1)];
  embeds.forEach((part, i) => {
    // Name/value pairs alternate; a comma goes before each name unless the object was empty.
    if (i % 2 === 0 && !(i === 0 && base.length === 2)) parts.push(Buffer.from(','));
    parts.push(part);
  });
  parts.push(Buffer.from('}'));
  return Buffer.concat(parts);
}

export function riskStore(read: TenantReader): Pick<Storage, 'listRisks'> {
  const count = countCache();

  const filtered = (db: Kysely<Database>, tenantId: string, filters: RiskFilters) =>
    fromTenant(db, 'risks', tenantId).where((eb) => eb.and(filterExpressions(eb, tenantId, filters)));

  return {
    /**
     * One batch after `after` (or the first) as API JSON, the total under the filters, and the position of the last
     * item when more follow (null on the last batch).
     */
    listRisks: (scope, query, after) =>
      read(scope.tenantId, async (db) => {
        const { sortBy, sortOrder, perPage, cursor: _cursor, fields, include, format: _format, ...filters } = query;
        const column = sortColumns[sortBy];
        const { version, position } = await tenantState(db, scope.tenantId);
        let select = filtered(db, scope.tenantId, filters).select([
          'risks.id',
          'doc',
          'primary_asset_id',
          'risks.integration_id',
          `${column} as sortValue`,
        ]);
        if (after) {
          select = select.where((eb) =>
            eb(
              eb.refTuple(column, 'risks.id'),
              sortOrder === 'desc' ? '<' : '>',
              eb.tuple(after[0] as never, after[1]),
            ),
          );
        }
        // One row more than asked tells whether another batch follows.
        const fetched = await select
          .orderBy(column, sortOrder)
          .orderBy('risks.id', sortOrder)
          .limit(perPage + 1)
          .execute();
        const rows: RiskRow[] = fetched.slice(0, perPage).map((r) => ({
          id: r.id,
          sortValue: r.sortValue,
          doc: r.doc,
          primaryAssetId: r.primary_asset_id,
          integrationId: r.integration_id,
        }));

        if (include?.includes('primaryAsset')) {
          const ids = [...new Set(rows.map((r) => r.primaryAssetId).filter((id): id is string => id !== null))];
          const assets = await assetDocuments(db, scope.tenantId, ids);
          const byId = new Map([...assets].map(([id, a]) => [id, assetJson(a, a.doc)]));
          for (const row of rows)
            row.primaryAsset = (row.primaryAssetId !== null && byId.get(row.primaryAssetId)) || null;
        }
        if (include?.includes('integration')) {
          const ids = [...new Set(rows.map((r) => r.integrationId).filter((id): id is string => id !== null))];
          const integrations =
            ids.length === 0
              ? []
              : await fromTenant(db, 'integrations', scope.tenantId)
                  .select(['integrations.integration_id', 'doc'])
                  .where('integrations.integration_id', 'in', ids)
                  .execute();
          const byId = new Map(integrations.map((i) => [i.integration_id, i.doc]));
          for (const row of rows) row.integration = (row.integrationId !== null && byId.get(row.integrationId)) || null;
        }

        const total = await count(
          db,
          scope.tenantId,
          filters,
          async () =>
            Number(
              (
                await filtered(db, scope.tenantId, filters)
                  .select((eb) => eb.fn.countAll<number | string>().as('n'))
                  .executeTakeFirstOrThrow()
              ).n,
            ),
          version,
        );
        const last = rows[rows.length - 1];
        const next: RiskPosition | null = fetched.length > perPage && last ? [last.sortValue, last.id] : null;
        return { items: rows.map((row) => riskJson(row, fields)), total, next, position };
      }),
  };
}
