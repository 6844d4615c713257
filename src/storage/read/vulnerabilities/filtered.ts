// Which findings a vulnerability list holds: every filter as SQL over the findings (package filters through the
// packages child table, asset filters through semi-joins), for the list, its count and its walk
// (src/storage/read/vulnerabilities/list.ts).
import {
  sql,
  type ExpressionBuilder,
  type Expression,
  type Kysely,
  type SelectQueryBuilder,
  type SqlBool,
} from 'kysely';
import { severityLevelValues } from '../../../domain/enums.js';
import type { ListVulnerabilitiesQuery } from '../../../domain/vulnerabilities.js';
import { changedSince, columnFilters, environmentFilter, groupMemberFilter, type ColumnFilters } from '../filters.js';
import { fromTenant } from '../../tx/tenant.js';
import type { SqlDialect } from '../../db/dialect.js';
import type { Database } from '../../db/tables.js';

export type Eb = ExpressionBuilder<Database, 'vulnerabilities'>;
export type VulnerabilityFilters = Omit<
  ListVulnerabilitiesQuery,
  'sortBy' | 'sortOrder' | 'page' | 'perPage' | 'cursor' | 'includeTotal' | 'format'
> & {
  /** With `isOverdue`: the latest due date before now of a finding not exempted (null: none), read by the list. */
  overdueThrough?: string | null;
};

/** The latest due date before `now` of the tenant's findings not exempted; null when none is past. */
export async function latestPastDue(db: Kysely<Database>, tenantId: string, now: string): Promise<string | null> {
  const row = await fromTenant(db, 'vulnerabilities', tenantId)
    .select('vulnerabilities.due_at')
    .where('vulnerabilities.is_exempted', '=', 0)
    .where('vulnerabilities.due_at', '<', now)
    .orderBy('vulnerabilities.due_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row?.due_at ?? null;
}

const plainFilters: ColumnFilters = {
  lists: {
    vulnerabilityIds: 'vulnerabilities.vulnerability_id',
    assetIds: 'vulnerabilities.asset_id',
    providers: 'vulnerabilities.provider',
    executionIds: 'vulnerabilities.execution_id',
    integrationIds: 'vulnerabilities.integration_id',
  },
  flags: {
    hasKev: 'vulnerabilities.has_kev',
    isExploitable: 'vulnerabilities.is_exploitable',
    hasExploit: 'vulnerabilities.has_exploit',
    hasVendorFix: 'vulnerabilities.has_vendor_fix',
    isExempted: 'vulnerabilities.is_exempted',
  },
  ranges: [['firstObservedAtStart', 'firstObservedAtEnd', 'vulnerabilities.first_observed_at']],
};

export function filterExpressions(eb: Eb, tenantId: string, q: VulnerabilityFilters): Expression<SqlBool>[] {
  const db = eb as unknown as Kysely<Database>;
  const where = columnFilters(eb, q, plainFilters);
  if (q.severityLevels)
    where.push(
      eb(
        'severity_level_value',
        'in',
        q.severityLevels.map((level) => severityLevelValues[level]),
      ),
    );
  if (q.environmentIds)
    where.push(environmentFilter(eb, tenantId, q.environmentIds, eb.ref('vulnerabilities.integration_id')));
  if (q.regions) {
    const regions = q.regions;
    where.push(
      eb.exists(
        fromTenant(db, 'assets', tenantId)
          .select(sql.lit(1).as('one'))
          .where('assets.id', '=', eb.ref('vulnerabilities.asset_id'))
          .where('assets.region', 'in', regions),
      ),
    );
  }
  if (q.assetGroupIds) where.push(groupMemberFilter(eb, tenantId, q.assetGroupIds, eb.ref('vulnerabilities.asset_id')));
  if (q.dueAtEnd !== undefined) where.push(eb('vulnerabilities.due_at', '<=', q.dueAtEnd));
  // Past due: at or before the latest due date already passed (overdueThrough, read with the page: see below), so the
  // filter is the same, and its count kept, until the next due date passes.
  if (q.isOverdue !== undefined) {
    const through = q.overdueThrough ?? null;
    const past = through === null ? sql<SqlBool>`false` : eb('vulnerabilities.due_at', '<=', through);
    where.push(
      q.isOverdue
        ? eb.and([past, eb('vulnerabilities.is_exempted', '=', 0)])
        : eb.or([eb.not(past), eb('vulnerabilities.due_at', 'is', null), eb('vulnerabilities.is_exempted', '=', 1)]),
    );
  }
  // lastObservedAt, or the time of the finding's last change, whichever is later (pipeline.md §4).
  if (q.updatedSince !== undefined)
    where.push(
      eb.or([
        eb('vulnerabilities.last_observed_at', '>=', q.updatedSince),
        eb(
          eb.refTuple('vulnerabilities.asset_id', 'vulnerabilities.vulnerability_id'),
          'in',
          changedSince(eb, tenantId, q.updatedSince, ['finding']).select([
            'changes.asset_id',
            'changes.vulnerability_id',
          ]) as never,
        ),
      ]),
    );
  if (hasPackageFilters(q)) {
    where.push(
      eb(
        eb.refTuple('vulnerabilities.asset_id', 'vulnerabilities.vulnerability_id'),
        'in',
        packagesOf(db, tenantId, q).select([
          'vulnerability_packages.asset_id',
          'vulnerability_packages.vulnerability_id',
        ]) as never,
      ),
    );
  }
  return where;
}

/** The tenant's findings that satisfy every filter. */
export const filtered = (db: Kysely<Database>, tenantId: string, filters: VulnerabilityFilters) =>
  fromTenant(db, 'vulnerabilities', tenantId).where((eb) => eb.and(filterExpressions(eb, tenantId, filters)));

/** The filters that apply to a finding's packages (together, to one package: packagesOf). */
const PACKAGE_FILTERS = ['packageName', 'targetName', 'targetType', 'targetClass'] as const;
const isPackageFilter = (name: string): boolean => (PACKAGE_FILTERS as readonly string[]).includes(name);

export const hasPackageFilters = (q: Partial<VulnerabilityFilters>): boolean =>
  PACKAGE_FILTERS.some((name) => q[name] !== undefined);

/** Some package filter, and no other. */
export const onlyPackageFilters = (q: Partial<VulnerabilityFilters>): boolean =>
  hasPackageFilters(q) && Object.entries(q).every(([name, value]) => value === undefined || isPackageFilter(name));

/** The filters other than the package filters. */
export const withoutPackageFilters = (q: VulnerabilityFilters): VulnerabilityFilters =>
  Object.fromEntries(Object.entries(q).filter(([name]) => !isPackageFilter(name))) as VulnerabilityFilters;

/**
 * Whether the finding whose key is in these two columns (`w.asset_id`) has a package that satisfies every package
 * filter: a probe by key of the package index.
 */
export const withPackage = (
  db: Kysely<Database>,
  tenantId: string,
  q: VulnerabilityFilters,
  assetId: string,
  vulnerabilityId: string,
): Expression<SqlBool> =>
  sql<SqlBool>`exists ${packagesOf(db, tenantId, q)
    .select(sql.lit(1).as('one'))
    .where('vulnerability_packages.asset_id', '=', sql.ref<string>(assetId))
    .where('vulnerability_packages.vulnerability_id', '=', sql.ref<string>(vulnerabilityId))}`;

/**
 * The findings a page lists. On SQLite a package-filtered list starts from the distinct keys of the matching packages
 * (the package index alone) and looks each finding up by its key: given the keys as an `in` list, SQLite walks the
 * whole sort index probing the list instead (docs/DESIGN.md §114).
 */
export function listed(
  db: Kysely<Database>,
  dialect: SqlDialect,
  tenantId: string,
  filters: VulnerabilityFilters,
): SelectQueryBuilder<Database, 'vulnerabilities', object> {
  if (dialect.name !== 'sqlite' || !hasPackageFilters(filters)) return filtered(db, tenantId, filters);
  const rows = withoutPackageFilters(filters);
  // `cross join` keeps SQLite's join order: the keys first.
  return db
    .selectFrom(packageKeys(db, tenantId, filters))
    .crossJoin('vulnerabilities')
    .where('vulnerabilities.tenant_id', '=', tenantId)
    .whereRef('vulnerabilities.asset_id', '=', 'k.asset_id')
    .whereRef('vulnerabilities.vulnerability_id', '=', 'k.vulnerability_id')
    .where((eb) => eb.and(filterExpressions(eb as unknown as Eb, tenantId, rows)));
}

/** The tenant's packages that satisfy every package filter: the filters apply to one package together. */
export function packagesOf(db: Kysely<Database>, tenantId: string, q: VulnerabilityFilters) {
  let packages = fromTenant(db, 'vulnerability_packages', tenantId);
  if (q.packageName !== undefined) packages = packages.where('package_name', '=', q.packageName);
  if (q.targetName !== undefined) packages = packages.where('target_name', '=', q.targetName);
  if (q.targetType !== undefined) packages = packages.where('target_type', '=', q.targetType);
  if (q.targetClass) packages = packages.where('target_class', 'in', q.targetClass);
  return packages;
}

/** The distinct keys of the findings with a package that satisfies every package filter, as `k`. */
export const packageKeys = (db: Kysely<Database>, tenantId: string, q: VulnerabilityFilters) =>
  packagesOf(db, tenantId, q)
    .select(['vulnerability_packages.asset_id', 'vulnerability_packages.vulnerability_id'])
    .distinct()
    .as('k');
