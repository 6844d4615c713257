// Vulnerability finding reads: numbered pages or keyset batches over (sort value, asset_id, vulnerability_id), so a
// batch deep in the list costs what the first does; package-filtered pages by a walk of the sort order; exemptions
// spliced in. Which findings a list holds: src/storage/read/vulnerabilities/filtered.ts.
import type { Kysely, SelectQueryBuilder } from 'kysely';
import type { VulnerabilitySortField } from '../../../domain/vulnerabilities.js';
import { countCache } from '../count-cache.js';
import { fromTenant, tenantState } from '../../tx/tenant.js';
import { type TenantReader } from '../../tx/read.js';
import type { SqlDialect } from '../../db/dialect.js';
import { documentOf, storedFindings, type StoredFinding } from './documents.js';
import { findingItems } from './items.js';
import { flagOrdered } from './flag-order.js';
import { findingLadders, RUNG } from './ladder.js';
import {
  filtered,
  hasPackageFilters,
  latestPastDue,
  listed,
  onlyPackageFilters,
  packageKeys,
  withPackage,
  withoutPackageFilters,
  type VulnerabilityFilters,
} from './filtered.js';
import type { Database } from '../../db/tables.js';
import type { FindingPosition, Storage } from '../../types.js';

const sortColumns: Record<
  VulnerabilitySortField,
  'has_kev' | 'has_exploit' | 'last_observed_at' | 'first_observed_at' | 'severity_level_value'
> = {
  hasKev: 'has_kev',
  hasExploit: 'has_exploit',
  lastObservedAt: 'last_observed_at',
  firstObservedAt: 'first_observed_at',
  severityLevelValue: 'severity_level_value',
};

/** The filter of each flag a list can be sorted by. */
const flagFilters: Partial<Record<(typeof sortColumns)[VulnerabilitySortField], 'hasKev' | 'hasExploit'>> = {
  has_kev: 'hasKev',
  has_exploit: 'hasExploit',
};

const countOf = async (
  db: Kysely<Database>,
  dialect: SqlDialect,
  tenantId: string,
  filters: VulnerabilityFilters,
): Promise<number> => {
  // Only flagged findings are indexed on SQLite (docs/DESIGN.md §63): the others are all of them less those, each count
  // read from an index (1M findings: 294 ms reading the rows, ~135 ms as the difference). PostgreSQL has no flag index
  // (§71), so the difference would read the rows for its second count anyway: it counts the unflagged ones directly.
  const unflagged = (['hasKev', 'hasExploit'] as const).find((flag) => filters[flag] === false);
  if (unflagged !== undefined && dialect.name === 'sqlite') {
    const { [unflagged]: _false, ...rest } = filters;
    const flagged = { ...rest, [unflagged]: true };
    return (await countOf(db, dialect, tenantId, rest)) - (await countOf(db, dialect, tenantId, flagged));
  }
  // Package filters alone (but for `isExempted`, which a list has by default): the distinct finding keys of the
  // matching packages, read from the package index alone, less the exempted ones among them when the list leaves those
  // out (a count over the exempted findings only; docs/DESIGN.md §114). Every package row belongs to a stored finding,
  // written and removed with it.
  const { isExempted, ...unexempted } = filters;
  if (isExempted !== true && onlyPackageFilters(unexempted)) {
    const { n } = await db
      .selectFrom(packageKeys(db, tenantId, filters))
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .executeTakeFirstOrThrow();
    if (isExempted === undefined) return Number(n);
    // Each exempted finding's packages probed by key: an `in` list of the package keys would look up every match.
    const exempted = await fromTenant(db, 'vulnerabilities', tenantId)
      .where('vulnerabilities.is_exempted', '=', 1)
      .where(withPackage(db, tenantId, filters, 'vulnerabilities.asset_id', 'vulnerabilities.vulnerability_id'))
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(n) - Number(exempted.n);
  }
  return Number(
    (
      await filtered(db, tenantId, filters)
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );
};

/**
 * How far a package-filtered page may walk the list's sort index by default (docs/DESIGN.md §39): up to this many
 * findings, or twice the matches, whichever is more. A finding walked costs a key probe of its packages, a third of
 * what starting from a matching package costs (a lookup of its finding, then a place in the sort of all matches).
 */
export const PACKAGE_WALK_ROWS = 20_000;

/** The keys and sort value of a list's findings in its order, past a keyset position when given. */
function keysInOrder(
  findings: SelectQueryBuilder<Database, 'vulnerabilities', object>,
  column: (typeof sortColumns)[VulnerabilitySortField],
  direction: 'asc' | 'desc',
  after: FindingPosition | undefined,
) {
  let select = findings.select([
    'vulnerabilities.asset_id',
    'vulnerabilities.vulnerability_id',
    'vulnerabilities.is_exempted',
    `vulnerabilities.${column} as sortValue`,
  ]);
  if (after) {
    select = select.where((eb) =>
      eb(
        eb.refTuple(`vulnerabilities.${column}`, 'vulnerabilities.asset_id', 'vulnerabilities.vulnerability_id'),
        direction === 'desc' ? '<' : '>',
        eb.tuple(after[0] as never, after[1], after[2]),
      ),
    );
  }
  return select
    .orderBy(`vulnerabilities.${column}`, direction)
    .orderBy('vulnerabilities.asset_id', direction)
    .orderBy('vulnerabilities.vulnerability_id', direction);
}

interface WalkedKey {
  asset_id: string;
  vulnerability_id: string;
  is_exempted: number;
  sortValue: string | number;
  /** The document and intel, when read with the keys (a first page or a keyset batch not walked). */
  doc?: string;
  intel?: string | null;
  due_at?: string | null;
}

/**
 * A page of a package-filtered list by walking the list's sort index and probing each finding's packages by key,
 * rather than starting from the matching packages: a package that many findings have (openssl: 48,000 of 1,000,000)
 * otherwise costs a lookup of every match and a sort of all of them on every page (~0.5 s on SQLite), where the walk
 * reaches the first page's rows after ~2,000 findings. How far to walk is estimated from the two counts (the list
 * with and without the package filters, both kept per data version): when the page's rows are expected further than
 * `walkRows` allows (a rare package, a deep page), or the walk falls short, the answer is undefined and the other plan
 * answers.
 */
async function walkForPackages(
  db: Kysely<Database>,
  tenantId: string,
  filters: VulnerabilityFilters,
  page: {
    column: (typeof sortColumns)[VulnerabilitySortField];
    direction: 'asc' | 'desc';
    after: FindingPosition | undefined;
    limit: number;
    offset: number;
  },
  counted: (filters: VulnerabilityFilters) => Promise<number>,
  walkRows: number,
): Promise<WalkedKey[] | undefined> {
  if (walkRows === 0) return undefined;
  const { column, direction, after, limit, offset } = page;
  const rowFilters = withoutPackageFilters(filters);
  const matches = await counted(filters);
  if (matches === 0) return [];
  // Twice the expected distance, for matches that cluster unevenly along the sort order.
  const reach = Math.ceil((2 * (offset + limit) * (await counted(rowFilters))) / matches);
  if (reach > Math.max(walkRows, 2 * matches)) return undefined;
  const walked = keysInOrder(filtered(db, tenantId, rowFilters), column, direction, after).limit(reach);
  const rows = (await db
    .selectFrom(walked.as('w'))
    .selectAll()
    .where(withPackage(db, tenantId, filters, 'w.asset_id', 'w.vulnerability_id'))
    .orderBy('w.sortValue', direction)
    .orderBy('w.asset_id', direction)
    .orderBy('w.vulnerability_id', direction)
    .limit(limit)
    .offset(offset)
    .execute()) as WalkedKey[];
  if (rows.length === limit) return rows;
  // Short: the end of the list, or the end of the walk with more findings after it.
  const { n } = await db
    .selectFrom(walked.as('w'))
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(n) < reach ? rows : undefined;
}

const key = (assetId: string, vulnerabilityId: string) => `${assetId}\u0000${vulnerabilityId}`;

export function vulnerabilityStore(
  read: TenantReader,
  dialect: SqlDialect,
  walkRows: number,
  /** Findings between the kept rungs of a list (src/storage/read/vulnerabilities/ladder.ts). */
  rung = RUNG,
): Pick<Storage, 'listVulnerabilities' | 'findingPurls'> {
  const count = countCache();
  const ladders = findingLadders(rung);

  return {
    listVulnerabilities: (scope, query, after) =>
      read(scope.tenantId, async (db) => {
        const { sortBy, sortOrder, page, perPage, cursor: _cursor, includeTotal, format: _format, ...asked } = query;
        const filters: VulnerabilityFilters =
          asked.isOverdue === undefined
            ? asked
            : { ...asked, overdueThrough: await latestPastDue(db, scope.tenantId, new Date().toISOString()) };
        const column = sortColumns[sortBy];
        const direction = sortOrder === 'DESC' ? 'desc' : 'asc';
        // A keyset batch seeks past its position on the (tenant_id, is_exempted, sort, asset_id, vulnerability_id)
        // index and reads the documents with the keys, each row once. A numbered page past the first skips from the
        // nearest kept rung: SQLite reads the columns of the rows past the offset only, so the documents come with
        // the page's keys; on PostgreSQL, whose index scan would fetch every row it skips, it pages the narrow keys
        // first, then reads the documents of that page (as for assets).
        const offset = after ? 0 : (page - 1) * perPage;
        // Counts are filed under the data version this transaction sees: read once, however many the request asks.
        const { version, position } = await tenantState(db, scope.tenantId);
        const counted = async (counting: VulnerabilityFilters): Promise<number> =>
          count(db, scope.tenantId, counting, () => countOf(db, dialect, scope.tenantId, counting), version);
        // One row more than asked tells whether another batch follows.
        const inOrder = (from: FindingPosition | undefined) =>
          keysInOrder(listed(db, dialect, scope.tenantId, filters), column, direction, from);
        const ordered = inOrder(after).limit(perPage + 1);
        const withDocuments = <Row>(keys: SelectQueryBuilder<Database, 'vulnerabilities', Row>) =>
          keys.select([
            documentOf(scope.tenantId, 'vulnerabilities', (column) => dialect.document(column)).as('doc'),
            'vulnerabilities.intel',
            'vulnerabilities.due_at',
          ]);
        // A page past a rung, or a flag sort's, on SQLite: the documents with the keys (see above).
        const pageRows = <Row>(keys: SelectQueryBuilder<Database, 'vulnerabilities', Row>) =>
          dialect.name === 'sqlite' ? withDocuments(keys) : keys;
        // The list's name among the ladders a numbered page past the first starts from (src/storage/read/vulnerabilities/ladder.ts).
        const list = () =>
          `${scope.tenantId}\u0000${version}\u0000${column}\u0000${direction}\u0000${JSON.stringify(filters)}`;
        // A flag's sort reads its two runs apart (src/storage/read/vulnerabilities/flag-order.ts); a package filter walks the sort order.
        const flag = flagFilters[column];
        const walked = flag
          ? await flagOrdered(
              (value) => filtered(db, scope.tenantId, { ...filters, [flag]: value }),
              (value) => counted({ ...filters, [flag]: value }),
              filters[flag],
              { direction, after, limit: perPage + 1, offset, ladders, list, rows: pageRows },
            )
          : hasPackageFilters(filters)
            ? await walkForPackages(
                db,
                scope.tenantId,
                filters,
                { column, direction, after, limit: perPage + 1, offset },
                counted,
                walkRows,
              )
            : undefined;
        // A package-filtered list not walked sorts all its matches (on SQLite from their keys, `listed`): its documents
        // are read by key for the page's rows only.
        const fetched: WalkedKey[] =
          walked ??
          (hasPackageFilters(filters)
            ? await ordered.offset(offset).execute()
            : offset > 0
              ? await ladders.page(list(), offset, perPage + 1, inOrder, pageRows)
              : await withDocuments(ordered).execute());
        const keys = fetched.slice(0, perPage);

        // A keyset batch, the first page and a later one on SQLite have each document on their row; a later page on
        // PostgreSQL, a walked one or a package-filtered one reads them by key.
        const stored = new Map<string, StoredFinding>();
        if (keys.length > 0 && keys[0]!.doc === undefined)
          for (const row of await storedFindings(db, dialect, scope.tenantId, keys))
            stored.set(key(row.asset_id, row.vulnerability_id), row);

        const items = await findingItems(
          db,
          scope.tenantId,
          keys.map((k) =>
            k.doc === undefined
              ? { ...k, ...stored.get(key(k.asset_id, k.vulnerability_id))! }
              : (k as WalkedKey & StoredFinding),
          ),
        );
        const last = keys[keys.length - 1];
        const next: FindingPosition | null =
          fetched.length > perPage && last ? [last.sortValue, last.asset_id, last.vulnerability_id] : null;
        if (!includeTotal || after) return { items, next, position };
        const total = await counted(filters);
        return { items, total, next, position };
      }),

    findingPurls: (scope, assetId) =>
      read(scope.tenantId, async (db) =>
        (
          await fromTenant(db, 'vulnerability_packages', scope.tenantId)
            .select(['vulnerability_id', 'position', 'purl'])
            .where('vulnerability_packages.asset_id', '=', assetId)
            .where('purl', 'is not', null)
            .execute()
        ).map((r) => ({ vulnerabilityId: r.vulnerability_id, position: Number(r.position), purl: r.purl! })),
      ),
  };
}
