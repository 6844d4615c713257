// Counts of the asset list from an in-memory copy of its filter columns, one per (tenant, data version). A count that
// no index covers visits every matching row (docs/BENCHMARKS.md: 35–190 ms on 100,000 assets for common filters);
// the same count over columns held as typed arrays is a loop of a few milliseconds. The copy is read once per data
// version, in the background, in short read transactions that each check the version, and filed under it, so a count
// from it is of the same data as a page read at that version; a write bumps the version, and the next count starts
// reading a new copy. Only the filters below are
// answered here; a query with any other (ids, executions, groups, environments, services, text, dates) is counted by
// SQL. Each predicate mirrors its SQL in src/storage/read/assets/filters.ts, and test/storage/read/assets/counts.test.ts checks that both
// agree on both databases. The reasoning: docs/DESIGN.md §35.
import { sql, type Kysely } from 'kysely';
import { OPERATIONAL_STATE_TYPES } from '../../../domain/enums.js';
import type { AssetFilters } from './filters.js';
import { dataVersion, fromTenant } from '../../tx/tenant.js';
import { type TenantReader } from '../../tx/read.js';
import type { Database } from '../../db/tables.js';

/** List filters on a text column: the column is one of the items (exact, as `in` compares; null matches nothing). */
const LISTS = {
  providers: 'provider',
  regions: 'region',
  resourceTypes: 'resource_type',
  integrationIds: 'integration_id',
} as const;
/** Boolean filters on 0/1 columns. */
const FLAGS = {
  hasAdminPrivileges: 'has_admin_privileges',
  hasOverlyPermissivePrivileges: 'has_overly_permissive_privileges',
  isSusceptibleToPrivilegeEscalation: 'is_susceptible_to_privilege_escalation',
  hasKev: 'has_kev',
  hasExploit: 'has_exploit',
  isExploitable: 'is_exploitable',
  isPubliclyExposed: 'is_publicly_exposed',
  isVulnerable: 'is_vulnerable',
} as const;
/** Bits of the severity masks: severityLevels (n_x > 0) and secretsLevels (n_x_secrets > 0). */
const LEVEL_BITS = { LOW: 1, MEDIUM: 2, HIGH: 4, CRITICAL: 8 } as const;
type Level = keyof typeof LEVEL_BITS;

const COUNTABLE = new Set<string>([
  ...Object.keys(LISTS),
  ...Object.keys(FLAGS),
  'severityLevels',
  'secretsLevels',
  'riskScoreGte',
  'operationalStates',
]);

/** Whether every filter the query sets can be answered from the columns. */
export const countable = (filters: AssetFilters): boolean =>
  Object.entries(filters).every(([name, value]) => value === undefined || COUNTABLE.has(name));

/** A text column as codes into its distinct values; code 0 is null. */
interface Coded {
  codes: Uint32Array;
  values: Map<string, number>;
}

interface Columns {
  size: number;
  lists: Record<keyof typeof LISTS, Coded>;
  flags: Record<keyof typeof FLAGS, Uint8Array>;
  levels: Uint8Array;
  secrets: Uint8Array;
  /** NaN where the score is null: NaN >= x is false, as null >= x is not true in SQL. */
  risk: Float64Array;
  /** The operational state where the resource type has one (OPERATIONAL_STATE_TYPES), else code 0. */
  state: Coded;
}

/**
 * Whether to read a tenant's columns in the table's own order (SQLite's rowid) rather than by asset id. In rowid order
 * the read is one pass over the table: 100,000 assets in 0.23 s against 0.9 s through the primary key (the sqlite3
 * shell), each of the 20 batches holding the event loop that much less; but it passes over every tenant's rows, so
 * src/storage/read/assets/scan.ts decides, as for a count (docs/DESIGN.md §81). PostgreSQL reads by id.
 */
export type InRowidOrder = (db: Kysely<Database>, tenantId: string, version: number) => Promise<boolean>;

/** Rows per read transaction: on SQLite each batch holds the connection and the event loop for tens of milliseconds. */
const BATCH = 5_000;

/** How long after the first count of a new version the columns start to be read. */
const READ_DELAY_MS = 1000;

interface Kept {
  version: number;
  columns: Columns | 'too large';
}

const coded = (size: number): Coded => ({ codes: new Uint32Array(size), values: new Map() });
const code = (column: Coded, value: string | null): number => {
  if (value === null) return 0;
  let found = column.values.get(value);
  if (found === undefined) {
    found = column.values.size + 1;
    column.values.set(value, found);
  }
  return found;
};
const mask = (low: number, medium: number, high: number, critical: number): number =>
  (low > 0 ? 1 : 0) | (medium > 0 ? 2 : 0) | (high > 0 ? 4 : 0) | (critical > 0 ? 8 : 0);

/**
 * Reads the filter columns of a tenant's assets at one data version, a batch per read transaction: the connection (the
 * only one, on SQLite) is held for one batch at a time, never for the whole read, so requests go on between batches.
 * Every batch checks the version first; a write in between (a new version) abandons the read (undefined), since its
 * batches would no longer be of one state. Within one version the data cannot change: every write bumps it.
 */
async function readColumns(
  read: TenantReader,
  tenantId: string,
  maxRows: number,
  inRowidOrder: InRowidOrder,
): Promise<Kept | undefined> {
  const start = await read(tenantId, async (db) => {
    const { n } = await fromTenant(db, 'assets', tenantId)
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .executeTakeFirstOrThrow();
    const version = await dataVersion(db, tenantId);
    return { version, size: Number(n), byRowid: await inRowidOrder(db, tenantId, version) };
  });
  const { version, size, byRowid } = start;
  if (size > maxRows) return { version, columns: 'too large' };
  const columns: Columns = {
    size: 0,
    lists: {
      providers: coded(size),
      regions: coded(size),
      resourceTypes: coded(size),
      integrationIds: coded(size),
    },
    flags: Object.fromEntries(Object.keys(FLAGS).map((k) => [k, new Uint8Array(size)])) as Columns['flags'],
    levels: new Uint8Array(size),
    secrets: new Uint8Array(size),
    risk: new Float64Array(size),
    state: coded(size),
  };
  const stateTypes = new Set(OPERATIONAL_STATE_TYPES);
  const lists = Object.entries(LISTS) as [keyof typeof LISTS, (typeof LISTS)[keyof typeof LISTS]][];
  const flags = Object.entries(FLAGS) as [keyof typeof FLAGS, (typeof FLAGS)[keyof typeof FLAGS]][];
  // The position of the last row read, in the order read: an asset id, or a rowid on SQLite.
  let after: string | number | null = null;
  const position = byRowid ? sql<string | number>`assets.rowid` : sql<string | number>`assets.id`;
  let i = 0;
  for (;;) {
    const rows = await read(tenantId, async (db) => {
      if ((await dataVersion(db, tenantId)) !== version) return undefined;
      let select = fromTenant(db, 'assets', tenantId)
        .select([position.as('position'), ...Object.values(LISTS), ...Object.values(FLAGS)])
        .select(['n_low', 'n_medium', 'n_high', 'n_critical', 'n_low_secrets', 'n_medium_secrets'])
        .select(['n_high_secrets', 'n_critical_secrets', 'risk_score', 'operational_state'])
        .orderBy(position)
        .limit(BATCH);
      if (after !== null) select = select.where(position, '>', after);
      return select.execute();
    });
    if (rows === undefined) return undefined;
    // The version is the one counted first, so there are no more rows than counted then.
    for (const row of rows) {
      if (i >= size) break;
      for (const [param, column] of lists) columns.lists[param].codes[i] = code(columns.lists[param], row[column]);
      for (const [param, column] of flags) columns.flags[param][i] = Number(row[column]);
      columns.levels[i] = mask(row.n_low, row.n_medium, row.n_high, row.n_critical);
      columns.secrets[i] = mask(row.n_low_secrets, row.n_medium_secrets, row.n_high_secrets, row.n_critical_secrets);
      columns.risk[i] = row.risk_score === null ? NaN : Number(row.risk_score);
      columns.state.codes[i] =
        row.resource_type !== null && stateTypes.has(row.resource_type)
          ? code(columns.state, row.operational_state)
          : 0;
      i += 1;
    }
    if (rows.length < BATCH) break;
    after = rows[rows.length - 1]!.position;
    // SQLite's statements are synchronous, so without a turn of the event loop here the batches would run one after
    // another as promise continuations, and no request would be served until the last: 100,000 assets held the loop
    // for 0.9–1.7 s at once. A timer rather than setImmediate: the turn then runs the timers that are due as well as
    // the input waiting, whichever phase of the loop the read is in (it starts from a timer).
    await new Promise((resolve) => setTimeout(resolve, 0));
  }
  columns.size = i;
  return { version, columns };
}

/** A table from code to whether it is one of the items: codes the column has never seen match nothing. */
function wantedCodes(column: Coded, items: readonly string[]): Uint8Array {
  const table = new Uint8Array(column.values.size + 1);
  for (const item of items) {
    const found = column.values.get(item);
    if (found !== undefined) table[found] = 1;
  }
  return table;
}

/**
 * The assets among the columns that match every filter set. One tight pass per filter over its own column clears the
 * assets that fail it, then the survivors are counted: each loop reads one typed array and does no call per asset, so a
 * count of 100,000 assets is a fraction of a millisecond where a test per asset and filter took ~1.5 ms.
 */
export function countColumns(columns: Columns, filters: AssetFilters): number {
  const { size } = columns;
  const match = new Uint8Array(size).fill(1);
  for (const param of Object.keys(LISTS) as (keyof typeof LISTS)[]) {
    const items = filters[param];
    if (items === undefined) continue;
    const { codes } = columns.lists[param];
    const table = wantedCodes(columns.lists[param], items);
    for (let i = 0; i < size; i += 1) if (table[codes[i]!] === 0) match[i] = 0;
  }
  for (const param of Object.keys(FLAGS) as (keyof typeof FLAGS)[]) {
    const value = filters[param];
    if (value === undefined) continue;
    const flag = columns.flags[param];
    const wanted = value ? 1 : 0;
    for (let i = 0; i < size; i += 1) if (flag[i] !== wanted) match[i] = 0;
  }
  const levelMask = (levels: readonly Level[]) => levels.reduce((m, level) => m | LEVEL_BITS[level], 0);
  for (const [levels, column] of [
    [filters.severityLevels, columns.levels],
    [filters.secretsLevels, columns.secrets],
  ] as const) {
    if (levels === undefined) continue;
    const wanted = levelMask(levels);
    for (let i = 0; i < size; i += 1) if ((column[i]! & wanted) === 0) match[i] = 0;
  }
  if (filters.riskScoreGte !== undefined) {
    const min = filters.riskScoreGte;
    const { risk } = columns;
    // Written as a negation so that NaN (a null score) fails it, as null >= x is not true in SQL.
    for (let i = 0; i < size; i += 1) if (!(risk[i]! >= min)) match[i] = 0;
  }
  if (filters.operationalStates !== undefined) {
    const { codes } = columns.state;
    const table = wantedCodes(columns.state, filters.operationalStates);
    for (let i = 0; i < size; i += 1) if (table[codes[i]!] === 0) match[i] = 0;
  }
  let n = 0;
  for (let i = 0; i < size; i += 1) n += match[i]!;
  return n;
}

/**
 * The columns of each tenant at one data version, the least recently used tenant out once the rows kept pass
 * `maxRows`; a tenant larger than that is always counted by SQL. A request never waits for columns: when those of its
 * version are not kept, it counts by SQL and a read of the columns starts in a read transaction of its own (one per
 * tenant at a time), filed under the data version its batches were read at, so later requests find them.
 */
export function assetColumns(read: TenantReader, maxRows: number, inRowidOrder: InRowidOrder = async () => false) {
  const kept = new Map<string, Kept>();
  const reading = new Set<string>();
  let rows = 0;
  const sizeOf = (entry: { columns: Columns | 'too large' } | undefined) =>
    entry === undefined || entry.columns === 'too large' ? 0 : entry.columns.size;

  const keep = (tenantId: string, version: number, columns: Columns | 'too large') => {
    const before = kept.get(tenantId);
    // A slower read of an older version never replaces a newer one.
    if (before !== undefined && before.version > version) return;
    rows -= sizeOf(before);
    kept.delete(tenantId);
    kept.set(tenantId, { version, columns });
    rows += sizeOf({ columns });
    for (const [oldest, entry] of kept) {
      if (rows <= maxRows || oldest === tenantId) break;
      kept.delete(oldest);
      rows -= sizeOf(entry);
    }
  };

  const start = (tenantId: string) => {
    if (reading.has(tenantId)) return;
    reading.add(tenantId);
    // After a pause: the first requests of a version often come in a burst (a console's overview asks 13 counts at
    // once), and the read (~2 s of CPU for 100,000 assets) would slow them all; counted by SQL, they are done first.
    new Promise((resolve) => setTimeout(resolve, READ_DELAY_MS).unref())
      .then(() => readColumns(read, tenantId, maxRows, inRowidOrder))
      .then((read) => {
        if (read !== undefined) keep(tenantId, read.version, read.columns);
      })
      // Nothing is kept from a failed read (a closed database, an outage): a later count starts another.
      .catch(() => undefined)
      .finally(() => reading.delete(tenantId));
  };

  return (tenantId: string, version: number): Columns | undefined => {
    if (maxRows <= 0) return undefined;
    const entry = kept.get(tenantId);
    if (entry !== undefined && entry.version === version) {
      kept.delete(tenantId);
      kept.set(tenantId, entry);
      return entry.columns === 'too large' ? undefined : entry.columns;
    }
    // A request of an older version (its transaction began before a write) has no use for newer columns.
    if (entry === undefined || entry.version < version) start(tenantId);
    return undefined;
  };
}
