// The first half of the change log's step in the bulk write (docs/DESIGN.md §100): before the write changes a record,
// its tracked state is captured, once per run, into `change_captures`, inside the write's transaction; the settle step
// (append.ts) compares what is there at the end with what was captured and appends the difference. Each capture also
// marks its scope, which tells the comparison where a created record may appear: `asset` rows (an asset's state, or a
// mark that the run may create it), `scope` rows (every finding of the asset), `risks` rows (every risk on the asset).
// Captures are taken by asset (its state, findings and risks at once), by finding key (a feed load), by risk id, by
// the risks on some assets (a derivation), or for a whole tenant (an exemption or a VEX statement may change any
// finding). A tenant that did not exist before the run needs none: all it holds at the end is new.
import { sql, type RawBuilder, type Transaction } from 'kysely';
import type { Database } from '../db/tables.js';
import { insertRows } from '../db/insert-rows.js';
import { sqlDialects, type Dialect } from '../db/dialect.js';
import type { FindingKey } from '../read/vulnerabilities/documents.js';
import { assetState, findingState, riskState } from './states.js';

/** Assets captured per statement. */
const ASSETS_PER_STATEMENT = 200;
const CAPTURE_KEY = ['tenant_id', 'kind', 'asset_id', 'item'];

/** Where the comparison of a tenant looks: all of a kind, or what the captures mark. */
export interface CaptureScope {
  assets: 'all' | 'marked';
  findings: 'all' | 'marked';
  risks: 'all' | 'marked';
}

export interface ChangeCaptures {
  /** The tenant is new to the database: everything it holds at the end of the run was created by it. */
  fresh: (tenantId: string) => void;
  /** Captures the assets (their state, findings and risks) not captured yet in this run. */
  assets: (tenantId: string, assetIds: Iterable<string>) => Promise<void>;
  /** Captures the state of these assets alone (a risk's lifecycle moves its asset's risk score). */
  assetStates: (tenantId: string, assetIds: Iterable<string>) => Promise<void>;
  /** Captures the risks not captured yet, by id. */
  risks: (tenantId: string, riskIds: Iterable<string>) => Promise<void>;
  /** Captures these findings (not their assets: a feed load changes findings only), by key. */
  findings: (tenantId: string, keys: readonly FindingKey[]) => Promise<void>;
  /** Captures the risks on these assets and marks them: risks the run derives on them are its changes too. */
  risksOn: (tenantId: string, assetIds: Iterable<string>) => Promise<void>;
  /** Captures every risk and asset state of the tenant (a derivation of all its risks). */
  allRisks: (tenantId: string) => Promise<void>;
  /** Captures everything of the tenant not captured yet. */
  tenant: (tenantId: string) => Promise<void>;
  /** The records a soon-to-be resolved finding leaves with, as the API serves them, by vulnerability id. */
  leaving: (tenantId: string, assetId: string, records: Map<string, string>) => Promise<void>;
  /** Every tenant the run captured something of, or that is new. */
  tenants: () => Iterable<string>;
  scopeOf: (tenantId: string) => CaptureScope;
}

export function changeCaptures(tx: Transaction<Database>, dialect: Dialect): ChangeCaptures {
  const newTenants = new Set<string>();
  const whole = new Set<string>();
  const wholeRisks = new Set<string>();
  /** Assets captured with their findings and risks, and assets whose state alone is captured, per tenant. */
  const capturedAssets = new Map<string, Set<string>>();
  const capturedStates = new Map<string, Set<string>>();
  const capturedRisks = new Map<string, Set<string>>();
  const touched = new Set<string>();
  const doc = sqlDialects[dialect].document('r.doc');

  const setOf = (map: Map<string, Set<string>>, tenantId: string): Set<string> => {
    let set = map.get(tenantId);
    if (set === undefined) map.set(tenantId, (set = new Set()));
    return set;
  };
  const skips = (tenantId: string): boolean => newTenants.has(tenantId) || whole.has(tenantId);
  /** The ones of `keys` not in `map` yet for the tenant, now added to it. */
  const uncapturedOf = (map: Map<string, Set<string>>, tenantId: string, keys: Iterable<string>): string[] => {
    const captured = setOf(map, tenantId);
    const fresh = [...new Set(keys)].filter((key) => !captured.has(key));
    for (const key of fresh) captured.add(key);
    if (fresh.length > 0) touched.add(tenantId);
    return fresh;
  };
  const marks = (tenantId: string, kind: string, ids: readonly string[], item = () => '') =>
    insertRows(
      tx,
      'change_captures',
      CAPTURE_KEY,
      ids.map((id) => (kind === 'risk' ? [tenantId, kind, '', id] : [tenantId, kind, id, item()])),
      { key: CAPTURE_KEY },
    );

  /** Captures the tenant's risks `where` selects (over `risks as r`) that are not captured yet. */
  const captureRisks = (tenantId: string, where: RawBuilder<unknown>) =>
    sql`insert into change_captures (tenant_id, kind, asset_id, item, state, lifecycle, primary_asset_id, record)
      select r.tenant_id, 'risk', '', r.id, ${riskState()}, r.lifecycle_state, r.primary_asset_id, ${doc}
      from risks as r where r.tenant_id = ${tenantId} and ${where}
      on conflict (tenant_id, kind, asset_id, item) do nothing`.execute(tx);
  /** Captures the state of the tenant's assets `where` selects (over `assets as a`), and marks `ids`. */
  const captureStates = async (tenantId: string, where: RawBuilder<unknown>, ids: readonly string[]) => {
    await sql`insert into change_captures (tenant_id, kind, asset_id, item, state)
      select a.tenant_id, 'asset', a.id, '', ${assetState()} from assets as a
      where a.tenant_id = ${tenantId} and ${where}
      on conflict (tenant_id, kind, asset_id, item) do nothing`.execute(tx);
    // A mark for each asset the run may create.
    await marks(tenantId, 'asset', ids);
  };
  /** In chunks of ASSETS_PER_STATEMENT. */
  const chunked = async (ids: readonly string[], each: (chunk: string[]) => Promise<unknown>) => {
    for (let i = 0; i < ids.length; i += ASSETS_PER_STATEMENT) await each(ids.slice(i, i + ASSETS_PER_STATEMENT));
  };

  const assetStates = async (tenantId: string, assetIds: Iterable<string>): Promise<void> => {
    if (skips(tenantId) || wholeRisks.has(tenantId)) return;
    const ids = uncapturedOf(capturedStates, tenantId, assetIds);
    await chunked(ids, (chunk) => captureStates(tenantId, sql`a.id in (${sql.join(chunk)})`, chunk));
  };

  return {
    fresh(tenantId) {
      newTenants.add(tenantId);
      touched.add(tenantId);
    },
    tenants: () => touched,
    scopeOf(tenantId) {
      const all = newTenants.has(tenantId) || whole.has(tenantId);
      return {
        assets: all || wholeRisks.has(tenantId) ? 'all' : 'marked',
        findings: all ? 'all' : 'marked',
        risks: all || wholeRisks.has(tenantId) ? 'all' : 'marked',
      };
    },

    async assets(tenantId, assetIds) {
      if (skips(tenantId)) return;
      const ids = uncapturedOf(capturedAssets, tenantId, assetIds);
      for (const id of ids) setOf(capturedStates, tenantId).add(id);
      await chunked(ids, async (chunk) => {
        const list = sql.join(chunk);
        await sql`insert into change_captures (tenant_id, kind, asset_id, item, state, first_observed_at,
            severity_value, due_at, exempted)
          select v.tenant_id, 'finding', v.asset_id, v.vulnerability_id, ${findingState(tenantId)}, v.first_observed_at,
            v.severity_level_value, v.due_at, v.is_exempted
          from vulnerabilities as v where v.tenant_id = ${tenantId} and v.asset_id in (${list})
          on conflict (tenant_id, kind, asset_id, item) do nothing`.execute(tx);
        await captureStates(tenantId, sql`a.id in (${list})`, chunk);
        await marks(tenantId, 'scope', chunk);
        await captureRisks(tenantId, sql`r.primary_asset_id in (${list})`);
      });
    },

    assetStates,

    async risks(tenantId, riskIds) {
      if (skips(tenantId) || wholeRisks.has(tenantId)) return;
      const ids = uncapturedOf(capturedRisks, tenantId, riskIds);
      await chunked(ids, async (chunk) => {
        await captureRisks(tenantId, sql`r.id in (${sql.join(chunk)})`);
        await marks(tenantId, 'risk', chunk);
      });
    },

    async findings(tenantId, keys) {
      if (skips(tenantId) || keys.length === 0) return;
      touched.add(tenantId);
      const captured = capturedAssets.get(tenantId);
      const wanted = captured === undefined ? keys : keys.filter((k) => !captured.has(k.asset_id));
      const state = findingState(tenantId);
      for (let i = 0; i < wanted.length; i += 500) {
        const chunk = wanted.slice(i, i + 500);
        await (
          dialect === 'sqlite'
            ? sql`insert into change_captures (tenant_id, kind, asset_id, item, state, first_observed_at,
            severity_value, due_at, exempted)
              select v.tenant_id, 'finding', v.asset_id, v.vulnerability_id, ${state}, v.first_observed_at,
                v.severity_level_value, v.due_at, v.is_exempted
              from vulnerabilities as v where v.tenant_id = ${tenantId} and (v.asset_id, v.vulnerability_id)
                in (values ${sql.join(chunk.map((k) => sql`(${k.asset_id}, ${k.vulnerability_id})`))})
              on conflict (tenant_id, kind, asset_id, item) do nothing`
            : sql`insert into change_captures (tenant_id, kind, asset_id, item, state, first_observed_at,
            severity_value, due_at, exempted)
              select f.tenant_id, 'finding', f.asset_id, f.vulnerability_id, f.state, f.first_observed_at,
                f.severity_level_value, f.due_at, f.is_exempted
              from unnest(cast(${chunk.map((k) => k.asset_id)} as text[]),
                cast(${chunk.map((k) => k.vulnerability_id)} as text[])) as k(asset_id, vulnerability_id)
              cross join lateral (select v.tenant_id, v.asset_id, v.vulnerability_id, ${state} as state,
                  v.first_observed_at, v.severity_level_value, v.due_at, v.is_exempted from vulnerabilities as v
                where v.tenant_id = ${tenantId} and v.asset_id = k.asset_id
                  and v.vulnerability_id = k.vulnerability_id order by v.tenant_id) as f
              on conflict (tenant_id, kind, asset_id, item) do nothing`
        ).execute(tx);
      }
    },

    async risksOn(tenantId, assetIds) {
      if (skips(tenantId) || wholeRisks.has(tenantId)) return;
      const captured = capturedAssets.get(tenantId);
      const ids = [...new Set(assetIds)].filter((id) => captured?.has(id) !== true);
      if (ids.length === 0) return;
      touched.add(tenantId);
      await chunked(ids, async (chunk) => {
        await captureRisks(tenantId, sql`r.primary_asset_id in (${sql.join(chunk)})`);
        await marks(tenantId, 'risks', chunk);
      });
      // A derivation scores the scanned assets it derived anew.
      await assetStates(tenantId, ids);
    },

    async allRisks(tenantId) {
      if (skips(tenantId) || wholeRisks.has(tenantId)) return;
      touched.add(tenantId);
      wholeRisks.add(tenantId);
      await captureRisks(tenantId, sql`true`);
      await captureStates(tenantId, sql`true`, []);
    },

    async tenant(tenantId) {
      if (skips(tenantId)) return;
      touched.add(tenantId);
      whole.add(tenantId);
      // What the run captured already stays as it was captured: it may have been written since.
      const uncaptured = (kind: string, column: string) =>
        sql`not exists (select 1 from change_captures as c where c.tenant_id = ${tenantId} and c.kind = ${kind}
          and c.asset_id = ${kind === 'risk' ? '' : sql.ref(column)} and c.item = ${kind === 'risk' ? sql.ref(column) : ''})`;
      await sql`insert into change_captures (tenant_id, kind, asset_id, item, state, first_observed_at,
            severity_value, due_at, exempted)
        select v.tenant_id, 'finding', v.asset_id, v.vulnerability_id, ${findingState(tenantId)}, v.first_observed_at,
            v.severity_level_value, v.due_at, v.is_exempted
        from vulnerabilities as v where v.tenant_id = ${tenantId} and ${uncaptured('scope', 'v.asset_id')}
        on conflict (tenant_id, kind, asset_id, item) do nothing`.execute(tx);
      await captureRisks(
        tenantId,
        sql`(r.primary_asset_id is null or (${uncaptured('scope', 'r.primary_asset_id')}
          and ${uncaptured('risks', 'r.primary_asset_id')}))`,
      );
      await captureStates(tenantId, sql`true`, []);
    },

    async leaving(tenantId, assetId, records) {
      if (newTenants.has(tenantId) || records.size === 0) return;
      // A finding the run itself wrote and now resolves has no capture: its row here stays a mark, and no change.
      await insertRows(
        tx,
        'change_captures',
        [...CAPTURE_KEY, 'record'],
        [...records].map(([id, record]) => [tenantId, 'finding', assetId, id, record]),
        { key: CAPTURE_KEY },
        500,
      );
    },
  };
}
