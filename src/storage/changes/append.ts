// The second half of the change log's step in the bulk write (docs/DESIGN.md §100): at settle, after deriving, each
// tenant the run captured is compared with its captures and the differences appended to its log, in the run's
// transaction, at the next positions of the tenant's counter: assets, then findings (opened, reopened, updated, then
// resolved), then risks, each in key order. The comparison runs inside the database (insert … select): the records a
// write leaves as they were never leave it. The captures are emptied by the same transaction.
import { sql, type RawBuilder, type Transaction } from 'kysely';
import type { ChangeCause } from '../../domain/changes.js';
import { chunks } from '../../lib/collections.js';
import { dialectOf } from '../db/insert-rows.js';
import type { Database } from '../db/tables.js';
import type { CaptureScope, ChangeCaptures } from './capture.js';
import { findingJoins } from './joins.js';
import { rollUpFindings } from './rollup.js';
import { assetState, findingState, riskState } from './states.js';

export interface AppendContext {
  cause: ChangeCause;
  /** The changes' time: the write's commit, as near as it is known. */
  at: string;
}

/** The positions a run appended to a tenant's log: after `from`, `count` of them. */
export interface Appended {
  from: number;
  count: number;
}

/** Appends every captured tenant's changes; returns where each tenant's went. */
export async function appendChanges(
  tx: Transaction<Database>,
  captures: ChangeCaptures,
  context: AppendContext,
): Promise<Map<string, Appended>> {
  const appended = new Map<string, Appended>();
  for (const tenantId of captures.tenants()) {
    const run = await appendTenant(tx, tenantId, captures.scopeOf(tenantId), context);
    if (run.count > 0) appended.set(tenantId, run);
  }
  return appended;
}

/**
 * Gives the changes a run appended on these assets another cause: a `secinv ingest` of several files is one write that
 * records one scan per file, and each file's changes are its scan's (by the assets the file is about).
 */
export async function attributeChanges(
  tx: Transaction<Database>,
  tenantId: string,
  { from, count }: Appended,
  cause: ChangeCause,
  assetIds: readonly string[],
): Promise<void> {
  for (const some of chunks(assetIds))
    await tx
      .updateTable('changes')
      .set({ cause: JSON.stringify(cause), scan_id: cause.scanId ?? null })
      .where('tenant_id', '=', tenantId)
      .where('seq', '>', from)
      .where('seq', '<=', from + count)
      .where('asset_id', 'in', some)
      .execute();
}

async function appendTenant(
  tx: Transaction<Database>,
  tenantId: string,
  scope: CaptureScope,
  { cause, at }: AppendContext,
): Promise<Appended> {
  const row = await tx.selectFrom('tenants').select('change_seq').where('tenant_id', '=', tenantId).executeTakeFirst();
  const base = Number(row?.change_seq ?? 0);
  let count = 0;
  const causeText = JSON.stringify(cause);
  const scanId = cause.scanId ?? null;

  /** Appends the rows of `d` (type, asset_id, vulnerability_id, risk_id, before, after, record) in `order`. */
  const append = async (d: RawBuilder<unknown>, order: RawBuilder<unknown>): Promise<void> => {
    const result = await sql`insert into changes
        (tenant_id, seq, at, type, asset_id, vulnerability_id, risk_id, scan_id, cause, before, after, record)
      select ${tenantId}, ${base + count} + row_number() over (order by ${order}), ${at}, d.type, d.asset_id,
        d.vulnerability_id, d.risk_id, ${scanId}, ${causeText}, d.before, d.after, d.record
      from (${d}) as d where d.type is not null`.execute(tx);
    count += Number(result.numAffectedRows ?? 0n);
  };
  const asset = sql.ref('d.asset_id');
  const finding = sql`d.asset_id, d.vulnerability_id`;
  const risk = sql.ref('d.risk_id');
  /** The assets with a capture mark of these kinds (capture.ts). */
  const marked = (...kinds: string[]) =>
    sql`select m.asset_id from change_captures as m where m.tenant_id = ${tenantId} and m.kind in (${sql.join(kinds)})`;
  const findingScope = marked('scope');

  // The live findings of the scope: those of the marked assets, and those captured alone (a feed load's).
  const liveOf = (columns: RawBuilder<unknown>) =>
    scope.findings === 'all'
      ? sql`select ${columns} from vulnerabilities as v where v.tenant_id = ${tenantId}`
      : sql`select ${columns} from vulnerabilities as v
        where v.tenant_id = ${tenantId} and v.asset_id in (${findingScope})
      union all
      select ${columns} from change_captures as k
        join vulnerabilities as v on v.tenant_id = ${tenantId} and v.asset_id = k.asset_id and v.vulnerability_id = k.item
      where k.tenant_id = ${tenantId} and k.kind = 'finding' and k.asset_id not in (${findingScope})`;
  const liveFindings = liveOf(sql`v.asset_id, v.vulnerability_id, ${findingState(tenantId)} as after`);

  // Assets: live ones against their captures, then captured ones that left.
  const A = assetState('a');
  await append(
    sql`select case when c.state is null then 'asset.created' when c.state <> x.after then 'asset.updated' end as type,
        x.id as asset_id, null as vulnerability_id, null as risk_id, c.state as before, x.after, null as record
      from (select a.id, ${A} as after from assets as a where a.tenant_id = ${tenantId}
        ${scope.assets === 'all' ? sql`` : sql`and a.id in (${marked('asset')})`}) as x
      left join change_captures as c on c.tenant_id = ${tenantId} and c.kind = 'asset' and c.asset_id = x.id
        and c.item = ''`,
    asset,
  );
  await append(
    sql`select 'asset.removed' as type, c.asset_id, null as vulnerability_id, null as risk_id, c.state as before,
        null as after, c.record from change_captures as c
      where c.tenant_id = ${tenantId} and c.kind = 'asset' and c.state is not null
        and not exists (select 1 from assets as a where a.tenant_id = ${tenantId} and a.id = c.asset_id)`,
    asset,
  );

  // Findings: live ones against their captures (a new one reopens when it was resolved before), then those that left.
  await append(
    sql`select case when c.state is null and t.vulnerability_id is not null then 'finding.reopened'
          when c.state is null then 'finding.opened' when c.state <> x.after then 'finding.updated' end as type,
        x.asset_id, x.vulnerability_id, null as risk_id, c.state as before, x.after, null as record
      from (${liveFindings}) as x
      ${findingJoins(dialectOf(tx), tenantId)}`,
    finding,
  );
  const left = sql`change_captures as c where c.tenant_id = ${tenantId} and c.kind = 'finding' and c.state is not null
    and not exists (select 1 from vulnerabilities as v where v.tenant_id = ${tenantId} and v.asset_id = c.asset_id
      and v.vulnerability_id = c.item)`;
  const resolvedFrom = base + count;
  await append(
    sql`select 'finding.resolved' as type, c.asset_id, c.item as vulnerability_id, null as risk_id, c.state as before,
        null as after, c.record from ${left}`,
    finding,
  );
  // The findings that left, again: the changes just appended for them, each with its capture (by key, where `left`
  // would compare every capture of the scope with the live findings once more).
  const resolved = sql`changes as r join change_captures as c on c.tenant_id = ${tenantId} and c.kind = 'finding'
      and c.asset_id = r.asset_id and c.item = r.vulnerability_id
    where r.tenant_id = ${tenantId} and r.seq > ${resolvedFrom} and r.seq <= ${base + count}`;
  // The rollup, before the resolved findings below move: a live finding among them was reopened by this write.
  await rollUpFindings(
    tx,
    tenantId,
    {
      live: liveOf(
        sql`v.asset_id, v.vulnerability_id, v.severity_level_value, v.due_at, v.is_exempted, v.first_observed_at`,
      ),
      left: resolved,
    },
    at,
  );
  // Each resolved finding is remembered with its first observation; one back again is no longer resolved.
  await sql`insert into resolved_findings (tenant_id, asset_id, vulnerability_id, first_observed_at, resolved_at)
    select c.tenant_id, c.asset_id, c.item, c.first_observed_at, ${at} from ${resolved}
    on conflict (tenant_id, asset_id, vulnerability_id)
      do update set first_observed_at = excluded.first_observed_at, resolved_at = excluded.resolved_at`.execute(tx);
  await sql`delete from resolved_findings where tenant_id = ${tenantId}
    ${scope.findings === 'all' ? sql`` : sql`and asset_id in (${findingScope})`}
    and exists (select 1 from vulnerabilities as v where v.tenant_id = ${tenantId}
      and v.asset_id = resolved_findings.asset_id and v.vulnerability_id = resolved_findings.vulnerability_id)`.execute(
    tx,
  );

  // Risks: those captured, or on an asset whose risks were, against their captures; then captured ones that left.
  await append(
    sql`select case when c.state is null then 'risk.opened' when c.state = x.after then null
          when c.lifecycle = 'OPEN' and x.lifecycle <> 'OPEN' then 'risk.dismissed'
          when c.lifecycle <> 'OPEN' and x.lifecycle = 'OPEN' then 'risk.reopened' else 'risk.updated' end as type,
        x.primary_asset_id as asset_id, null as vulnerability_id, x.id as risk_id, c.state as before, x.after,
        null as record
      from (select r.id, r.primary_asset_id, r.lifecycle_state as lifecycle, ${riskState('r')} as after
        from risks as r where r.tenant_id = ${tenantId} ${
          scope.risks === 'all'
            ? sql``
            : sql`and (r.primary_asset_id in (${marked('scope', 'risks')}) or r.id in (select k.item from change_captures as k
                where k.tenant_id = ${tenantId} and k.kind = 'risk'))`
        }) as x
      left join change_captures as c on c.tenant_id = ${tenantId} and c.kind = 'risk' and c.asset_id = ''
        and c.item = x.id`,
    risk,
  );
  await append(
    sql`select 'risk.resolved' as type, c.primary_asset_id as asset_id, null as vulnerability_id, c.item as risk_id,
        c.state as before, null as after, c.record from change_captures as c
      where c.tenant_id = ${tenantId} and c.kind = 'risk' and c.state is not null
        and not exists (select 1 from risks as r where r.tenant_id = ${tenantId} and r.id = c.item)`,
    risk,
  );

  await tx.deleteFrom('change_captures').where('tenant_id', '=', tenantId).execute();
  if (count > 0)
    await tx
      .updateTable('tenants')
      .set({ change_seq: base + count })
      .where('tenant_id', '=', tenantId)
      .execute();
  return { from: base, count };
}
