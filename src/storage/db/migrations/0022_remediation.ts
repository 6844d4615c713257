// Migration 0022_remediation: remediation over time (pipeline.md §6, docs/DESIGN.md §106). `tenants.sla` holds a
// tenant's SLA days per severity as JSON (null: the defaults); `vulnerabilities.due_at` each finding's due date (the
// stored findings' set here by the defaults), with an index for `isOverdue` and `dueAtEnd`; `change_captures` gains the severity, due date and exemption a finding had
// before a write, which the rollup compares. `finding_days` is the per-day rollup of the findings (opened, resolved,
// and the changes of the open and overdue counts, by severity), `finding_fixes` the time-to-fix histogram of the
// resolutions of each day (and of each month, `finding_fix_months`, so that a long range reads a month as one); all are kept in step with the change log by the write that appends it. Dismissals and
// exemptions that expire: `risk_states.until`, `exemptions.expires_at`, and `tenants.next_expiry_at`, the earliest of
// a tenant's, which the expiry runner looks up. Frozen: the SQL it ran when it was released, per dialect.
import type { FrozenMigration } from './frozen.js';

/** The default SLA's days by severity value (src/domain/remediation.ts DEFAULT_SLA when this was released). */
const SLA_DAYS: [number, number][] = [
  [5, 15],
  [4, 30],
  [3, 90],
  [2, 180],
];
/** The due date of every stored finding by the default SLA and its KEV entry, as `dueAt` computes it. */
const backfill = (plus: (days: number) => string, kevDue: string) => {
  const sla = `case severity_level_value ${SLA_DAYS.map(([level, days]) => `when ${level} then ${plus(days)}`).join(' ')} end`;
  const kev = `(${kevDue} || 'T23:59:59.999Z')`;
  return `update "vulnerabilities" set "due_at" = case when ${kev} is null then ${sla} when ${sla} is null then ${kev} when ${kev} < ${sla} then ${kev} else ${sla} end`;
};

const tenantTables = ['finding_days', 'finding_fixes', 'finding_fix_months'];

export const migration: FrozenMigration = {
  sqlite: [
    `alter table "tenants" add column "sla" text`,
    `alter table "tenants" add column "next_expiry_at" text`,
    `alter table "vulnerabilities" add column "due_at" text`,
    `create index if not exists "vulnerabilities_due_at_idx" on "vulnerabilities" ("tenant_id", "is_exempted", "due_at", "asset_id", "vulnerability_id") where "due_at" is not null`,
    `alter table "change_captures" add column "severity_value" integer`,
    `alter table "change_captures" add column "due_at" text`,
    `alter table "change_captures" add column "exempted" integer`,
    `alter table "risk_states" add column "until" text`,
    `alter table "exemptions" add column "expires_at" text`,
    backfill(
      (days) => `strftime('%Y-%m-%dT%H:%M:%fZ', first_observed_at, '+${days} days')`,
      `json_extract(intel, '$.knownExploit.dueDate')`,
    ),
    `create table if not exists "finding_days" ("tenant_id" text not null, "day" text not null, "severity" integer not null, "opened" integer default 0 not null, "resolved" integer default 0 not null, "open_delta" integer default 0 not null, "overdue_delta" integer default 0 not null, constraint "finding_days_pkey" primary key ("tenant_id", "day", "severity")) without rowid`,
    `create table if not exists "finding_fixes" ("tenant_id" text not null, "day" text not null, "severity" integer not null, "fix_days" integer not null, "within" integer not null, "count" integer default 0 not null, constraint "finding_fixes_pkey" primary key ("tenant_id", "day", "severity", "fix_days", "within")) without rowid`,
    `create table if not exists "finding_fix_months" ("tenant_id" text not null, "month" text not null, "severity" integer not null, "fix_days" integer not null, "within" integer not null, "count" integer default 0 not null, constraint "finding_fix_months_pkey" primary key ("tenant_id", "month", "severity", "fix_days", "within")) without rowid`,
  ],
  postgres: [
    `alter table "tenants" add column "sla" text`,
    `alter table "tenants" add column "next_expiry_at" text collate "C"`,
    `alter table "vulnerabilities" add column "due_at" text collate "C"`,
    `create index if not exists "vulnerabilities_due_at_idx" on "vulnerabilities" ("tenant_id", "is_exempted", "due_at", "asset_id", "vulnerability_id") where "due_at" is not null`,
    `alter table "change_captures" add column "severity_value" integer`,
    `alter table "change_captures" add column "due_at" text collate "C"`,
    `alter table "change_captures" add column "exempted" integer`,
    `alter table "risk_states" add column "until" text collate "C"`,
    `alter table "exemptions" add column "expires_at" text collate "C"`,
    backfill(
      (days) =>
        `to_char((cast(first_observed_at as timestamptz) + interval '${days} days') at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`,
      `(cast(intel as jsonb) #>> '{knownExploit,dueDate}')`,
    ),
    `create table if not exists "finding_days" ("tenant_id" text not null collate "C", "day" text not null collate "C", "severity" integer not null, "opened" integer default 0 not null, "resolved" integer default 0 not null, "open_delta" integer default 0 not null, "overdue_delta" integer default 0 not null, constraint "finding_days_pkey" primary key ("tenant_id", "day", "severity"))`,
    `create table if not exists "finding_fixes" ("tenant_id" text not null collate "C", "day" text not null collate "C", "severity" integer not null, "fix_days" integer not null, "within" integer not null, "count" integer default 0 not null, constraint "finding_fixes_pkey" primary key ("tenant_id", "day", "severity", "fix_days", "within"))`,
    `create table if not exists "finding_fix_months" ("tenant_id" text not null collate "C", "month" text not null collate "C", "severity" integer not null, "fix_days" integer not null, "within" integer not null, "count" integer default 0 not null, constraint "finding_fix_months_pkey" primary key ("tenant_id", "month", "severity", "fix_days", "within"))`,
    `grant select on finding_days, finding_fixes, finding_fix_months to secinv_api`,
    ...tenantTables.flatMap((table) => [
      `alter table ${table} enable row level security`,
      `alter table ${table} force row level security`,
      `create policy tenant_isolation on ${table} to secinv_api using (tenant_id = current_setting('secinv.tenant_id', true))`,
      `create policy owner_access on ${table} to current_user using (true) with check (true)`,
    ]),
  ],
};
