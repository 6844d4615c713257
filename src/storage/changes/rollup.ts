// The remediation rollup (pipeline.md §6, docs/DESIGN.md §106), kept in step with the change log by the same step of
// the same transaction: at settle, each finding the write opened, moved or resolved adds to the rows of the days it
// concerns, by severity, in `finding_days` (opened, resolved, and the changes of the open and overdue counts) and
// `finding_fixes` (each resolution's whole days to fix and whether it met its due date). Rows only ever add deltas, so
// a late write (an import of findings first observed months ago) lands on the days its data names, beside what the
// earlier writes put there; nothing is summed once and frozen.
//
// A finding counts as open from the day of its first observation (or of the write that reopened it) to the day of the
// write that resolved it. It counts as overdue at the end of a day D when it is open then, not exempted and its due
// date's day is at most D (due before the next midnight): an addition on day `a` with due day `k` adds 1 to the overdue
// delta of day max(a, k), and its removal on day `b` takes 1 from day max(b, k), which cancels the addition when the
// finding left before it was due. A finding that changes severity, due date or exemption leaves its old contribution
// and gets its new one on the day of the write.
import { sql, type RawBuilder, type Transaction } from 'kysely';
import { dialectOf } from '../db/insert-rows.js';
import { sqlDialects } from '../db/dialect.js';
import type { Database } from '../db/tables.js';
import { findingJoins } from './joins.js';

export interface RollupScope {
  /** The live findings of the write's scope: asset_id, vulnerability_id, severity_level_value, due_at, is_exempted, first_observed_at. */
  live: RawBuilder<unknown>;
  /** `… where …` over the captures `c` of the findings that left (resolved). */
  left: RawBuilder<unknown>;
}

/** The day a contribution's overdue count starts: its due day, or the day it was added if later; null: never. */
const overdueKey = (due: string, exempted: string) =>
  sql`case when ${sql.ref(exempted)} = 0 and ${sql.ref(due)} is not null then substr(${sql.ref(due)}, 1, 10) end`;
const later = (a: RawBuilder<unknown>, b: RawBuilder<unknown>) => sql`case when ${b} > ${a} then ${b} else ${a} end`;

/** Adds what the write changed of the tenant's findings to its rollup; `at` is the write's time. */
export async function rollUpFindings(
  tx: Transaction<Database>,
  tenantId: string,
  { live, left }: RollupScope,
  at: string,
): Promise<void> {
  const day = sql`cast(${at.slice(0, 10)} as text)`;
  const today = day;
  const added = sql`(case when m.before_state is null then m.add_day else ${day} end)`;
  // m and l are read more than once: materialized, each is worked out once (SQLite would otherwise run the join of the
  // live findings once per reference).
  await sql`with l as materialized (select c.severity_value, c.due_at, c.exempted from ${left}), x as (
      select x.severity_level_value as sev_a, ${overdueKey('x.due_at', 'x.is_exempted')} as key_a,
        c.state as before_state, c.severity_value as sev_b, ${overdueKey('c.due_at', 'c.exempted')} as key_b,
        case when t.vulnerability_id is not null then ${day}
          when substr(x.first_observed_at, 1, 10) < ${day} then substr(x.first_observed_at, 1, 10)
          else ${day} end as add_day
      from (${live}) as x
      ${findingJoins(dialectOf(tx), tenantId)}
    ), m as materialized (
      select * from x where x.before_state is null or x.sev_b <> x.sev_a
        or coalesce(x.key_b, '') <> coalesce(x.key_a, '')
    ), d as (
      select ${added} as day, m.sev_a as severity, case when m.before_state is null then 1 else 0 end as opened,
        0 as resolved, 1 as open_delta, 0 as overdue_delta from m
      union all
      select ${today}, m.sev_b, 0, 0, -1, 0 from m where m.before_state is not null
      union all
      select ${later(added, sql`m.key_a`)}, m.sev_a, 0, 0, 0, 1 from m where m.key_a is not null
      union all
      select ${later(today, sql`m.key_b`)}, m.sev_b, 0, 0, 0, -1 from m
        where m.before_state is not null and m.key_b is not null
      union all
      select ${today}, l.severity_value, 0, 1, -1, 0 from l
      union all
      select ${later(today, overdueKey('l.due_at', 'l.exempted'))}, l.severity_value, 0, 0, 0, -1 from l
        where l.exempted = 0 and l.due_at is not null
    )
    insert into finding_days (tenant_id, day, severity, opened, resolved, open_delta, overdue_delta)
    select ${tenantId}, d.day, d.severity, sum(d.opened), sum(d.resolved), sum(d.open_delta), sum(d.overdue_delta)
    from d where true group by d.day, d.severity
    on conflict (tenant_id, day, severity) do update set opened = finding_days.opened + excluded.opened,
      resolved = finding_days.resolved + excluded.resolved, open_delta = finding_days.open_delta + excluded.open_delta,
      overdue_delta = finding_days.overdue_delta + excluded.overdue_delta`.execute(tx);

  const days = sqlDialects[dialectOf(tx)].elapsedDays(sql.ref('c.first_observed_at'), sql`${at}`);
  const fixes = sql`select c.severity_value as severity, ${days} as fix_days,
      case when c.due_at is null then -1 when ${at} <= c.due_at then 1 else 0 end as within
    from ${left}`;
  // By day, and by month: a range reads its whole months from the second (docs/DESIGN.md §106).
  for (const [table, column, value] of [
    ['finding_fixes', 'day', at.slice(0, 10)],
    ['finding_fix_months', 'month', at.slice(0, 7)],
  ] as const)
    await sql`insert into ${sql.table(table)} (tenant_id, ${sql.ref(column)}, severity, fix_days, within, count)
      select ${tenantId}, cast(${value} as text), f.severity, f.fix_days, f.within, count(*) from (${fixes}) as f
      where true group by f.severity, f.fix_days, f.within
      on conflict (tenant_id, ${sql.ref(column)}, severity, fix_days, within)
        do update set count = ${sql.table(table)}.count + excluded.count`.execute(tx);
}
