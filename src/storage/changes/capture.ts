// The first half of the change log's step in the bulk write (docs/DESIGN.md §100): before the write changes a record,
// its tracked state is captured, once per run, into `change_captures`, inside the write's transaction; the settle step
// (append.ts) compares what is there at the end with what was captured and appends the difference. Captures are taken
// by asset (the asset, its findings and its risks at once), by risk id, or for a whole tenant (an exemption or a VEX
// statement may change any finding). A tenant that did not exist before the run needs none: all it holds at the end
// is new.
import { sql, type RawBuilder, type Transaction } from 'kysely';
import type { Database } from '../db/tables.js';
import { insertRows } from '../db/insert-rows.js';
import { sqlDialects, type Dialect } from '../db/dialect.js';
import type { FindingKey } from '../read/vulnerabilities/documents.js';
import { assetState, findingState, riskState } from './states.js';

/** Assets captured per statement. */
const ASSETS_PER_STATEMENT = 200;
const CAPTURE_KEY = ['tenant_id', 'kind', 'asset_id', 'item'];

export interface ChangeCaptures {
  /** The tenant is new to the database: everything it holds at the end of the run was created by it. */
  fresh: (tenantId: string) => void;
  isFresh: (tenantId: string) => boolean;
  /** Captures the assets (with their findings and risks) not captured yet in this run. */
  assets: (tenantId: string, assetIds: Iterable<string>) => Promise<void>;
  /** Captures the risks not captured yet, by id. */
  risks: (tenantId: string, riskIds: Iterable<string>) => Promise<void>;
  /** Captures these findings (not their assets: a feed load changes findings only), by key. */
  findings: (tenantId: string, keys: readonly FindingKey[]) => Promise<void>;
  /** Captures the risks on these assets and marks them: risks the run derives on them are its changes too. */
  risksOn: (tenantId: string, assetIds: Iterable<string>) => Promise<void>;
  /** Captures everything of the tenant not captured yet. */
  tenant: (tenantId: string) => Promise<void>;
  /** The records a soon-to-be resolved finding leaves with, as the API serves them, by vulnerability id. */
  leaving: (tenantId: string, assetId: string, records: Map<string, string>) => Promise<void>;
  /** Every tenant the run captured something of, or that is new. */
  tenants: () => Iterable<string>;
  /** Whether the whole tenant was captured (its scope is all of it). */
  isWhole: (tenantId: string) => boolean;
}

export function changeCaptures(tx: Transaction<Database>, dialect: Dialect): ChangeCaptures {
  const newTenants = new Set<string>();
  const whole = new Set<string>();
  const capturedAssets = new Map<string, Set<string>>();
  const capturedRisks = new Map<string, Set<string>>();
  const touched = new Set<string>();
  const doc = sqlDialects[dialect].document('r.doc');

  const setOf = (map: Map<string, Set<string>>, tenantId: string): Set<string> => {
    let set = map.get(tenantId);
    if (set === undefined) map.set(tenantId, (set = new Set()));
    return set;
  };
  const skips = (tenantId: string): boolean => newTenants.has(tenantId) || whole.has(tenantId);

  /** Captures the tenant's risks `where` selects (over `risks as r`) that are not captured yet. */
  const captureRisks = (tenantId: string, where: RawBuilder<unknown>) =>
    sql`insert into change_captures (tenant_id, kind, asset_id, item, state, lifecycle, primary_asset_id, record)
      select r.tenant_id, 'risk', '', r.id, ${riskState()}, r.lifecycle_state, r.primary_asset_id, ${doc}
      from risks as r where r.tenant_id = ${tenantId} and ${where}
      on conflict (tenant_id, kind, asset_id, item) do nothing`.execute(tx);

  const captureAssets = async (tenantId: string, ids: string[]): Promise<void> => {
    const list = sql.join(ids);
    await sql`insert into change_captures (tenant_id, kind, asset_id, item, state, first_observed_at)
      select v.tenant_id, 'finding', v.asset_id, v.vulnerability_id, ${findingState(tenantId)}, v.first_observed_at
      from vulnerabilities as v where v.tenant_id = ${tenantId} and v.asset_id in (${list})`.execute(tx);
    await sql`insert into change_captures (tenant_id, kind, asset_id, item, state)
      select a.tenant_id, 'asset', a.id, '', ${assetState()} from assets as a
      where a.tenant_id = ${tenantId} and a.id in (${list})`.execute(tx);
    // A mark for each asset the run may create: the findings of the captured assets are the scope of the diff.
    await insertRows(
      tx,
      'change_captures',
      CAPTURE_KEY,
      ids.map((id) => [tenantId, 'asset', id, '']),
      {
        key: CAPTURE_KEY,
      },
    );
    await captureRisks(tenantId, sql`r.primary_asset_id in (${list})`);
  };

  return {
    fresh(tenantId) {
      newTenants.add(tenantId);
      touched.add(tenantId);
    },
    isFresh: (tenantId) => newTenants.has(tenantId),
    isWhole: (tenantId) => whole.has(tenantId),
    tenants: () => touched,

    async assets(tenantId, assetIds) {
      if (skips(tenantId)) return;
      const captured = setOf(capturedAssets, tenantId);
      const ids = [...new Set(assetIds)].filter((id) => !captured.has(id));
      if (ids.length === 0) return;
      touched.add(tenantId);
      for (const id of ids) captured.add(id);
      for (let i = 0; i < ids.length; i += ASSETS_PER_STATEMENT)
        await captureAssets(tenantId, ids.slice(i, i + ASSETS_PER_STATEMENT));
    },

    async risks(tenantId, riskIds) {
      if (skips(tenantId)) return;
      const captured = setOf(capturedRisks, tenantId);
      const ids = [...new Set(riskIds)].filter((id) => !captured.has(id));
      if (ids.length === 0) return;
      touched.add(tenantId);
      for (const id of ids) captured.add(id);
      for (let i = 0; i < ids.length; i += 500) {
        const chunk = ids.slice(i, i + 500);
        await captureRisks(tenantId, sql`r.id in (${sql.join(chunk)})`);
        await insertRows(
          tx,
          'change_captures',
          CAPTURE_KEY,
          chunk.map((id) => [tenantId, 'risk', '', id]),
          {
            key: CAPTURE_KEY,
          },
        );
      }
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
            ? sql`insert into change_captures (tenant_id, kind, asset_id, item, state, first_observed_at)
              select v.tenant_id, 'finding', v.asset_id, v.vulnerability_id, ${state}, v.first_observed_at
              from vulnerabilities as v where v.tenant_id = ${tenantId} and (v.asset_id, v.vulnerability_id)
                in (values ${sql.join(chunk.map((k) => sql`(${k.asset_id}, ${k.vulnerability_id})`))})
              on conflict (tenant_id, kind, asset_id, item) do nothing`
            : sql`insert into change_captures (tenant_id, kind, asset_id, item, state, first_observed_at)
              select f.tenant_id, 'finding', f.asset_id, f.vulnerability_id, f.state, f.first_observed_at
              from unnest(cast(${chunk.map((k) => k.asset_id)} as text[]),
                cast(${chunk.map((k) => k.vulnerability_id)} as text[])) as k(asset_id, vulnerability_id)
              cross join lateral (select v.tenant_id, v.asset_id, v.vulnerability_id, ${state} as state,
                  v.first_observed_at from vulnerabilities as v
                where v.tenant_id = ${tenantId} and v.asset_id = k.asset_id
                  and v.vulnerability_id = k.vulnerability_id order by v.tenant_id) as f
              on conflict (tenant_id, kind, asset_id, item) do nothing`
        ).execute(tx);
      }
    },

    async risksOn(tenantId, assetIds) {
      if (skips(tenantId)) return;
      const captured = capturedAssets.get(tenantId);
      const ids = [...new Set(assetIds)].filter((id) => captured?.has(id) !== true);
      if (ids.length === 0) return;
      touched.add(tenantId);
      for (let i = 0; i < ids.length; i += ASSETS_PER_STATEMENT) {
        const chunk = ids.slice(i, i + ASSETS_PER_STATEMENT);
        await captureRisks(tenantId, sql`r.primary_asset_id in (${sql.join(chunk)})`);
        await insertRows(
          tx,
          'change_captures',
          CAPTURE_KEY,
          chunk.map((id) => [tenantId, 'risks', id, '']),
          {
            key: CAPTURE_KEY,
          },
        );
      }
    },

    async tenant(tenantId) {
      if (skips(tenantId)) return;
      touched.add(tenantId);
      whole.add(tenantId);
      // What the run captured already stays as it was captured: it may have been written since.
      const uncaptured = (kind: string, column: string) =>
        sql`not exists (select 1 from change_captures as c where c.tenant_id = ${tenantId} and c.kind = ${kind}
          and c.asset_id = ${kind === 'risk' ? '' : sql.ref(column)} and c.item = ${kind === 'risk' ? sql.ref(column) : ''})`;
      await sql`insert into change_captures (tenant_id, kind, asset_id, item, state, first_observed_at)
        select v.tenant_id, 'finding', v.asset_id, v.vulnerability_id, ${findingState(tenantId)}, v.first_observed_at
        from vulnerabilities as v where v.tenant_id = ${tenantId} and ${uncaptured('asset', 'v.asset_id')}`.execute(tx);
      await captureRisks(
        tenantId,
        sql`${uncaptured('risk', 'r.id')} and (r.primary_asset_id is null or ${uncaptured('asset', 'r.primary_asset_id')})`,
      );
      await sql`insert into change_captures (tenant_id, kind, asset_id, item, state)
        select a.tenant_id, 'asset', a.id, '', ${assetState()} from assets as a
        where a.tenant_id = ${tenantId} and ${uncaptured('asset', 'a.id')}`.execute(tx);
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
