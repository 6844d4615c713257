// Migration 0020_change_log: the change log (pipeline.md §4, docs/DESIGN.md §100). `changes` holds each tenant's log
// by position (`seq`, per tenant, counted in `tenants.change_seq`); `tenants.changes_pruned_seq` is the last position
// retention removed (a cursor before it is answered 410). `change_captures` holds, while a write runs, the tracked
// state of the records it is about to change (`state` null: a mark that it may create the record), and is emptied by
// the same write; `resolved_findings` remembers each resolved finding's first observation, so that one reported again
// is reopened with it. The API role reads the three, under row-level security. Frozen: the SQL it ran when it was
// released, per dialect.
import type { FrozenMigration } from './frozen.js';

const tenantTables = ['changes', 'change_captures', 'resolved_findings'];

export const migration: FrozenMigration = {
  sqlite: [
    `alter table "tenants" add column "change_seq" integer default 0 not null`,
    `alter table "tenants" add column "changes_pruned_seq" integer default 0 not null`,
    `create table if not exists "changes" ("tenant_id" text not null, "seq" integer not null, "at" text not null, "type" text not null, "asset_id" text, "vulnerability_id" text, "risk_id" text, "scan_id" text, "cause" text not null, "before" text, "after" text, "record" text, constraint "changes_pkey" primary key ("tenant_id", "seq")) without rowid`,
    `create index if not exists "changes_asset_idx" on "changes" ("tenant_id", "asset_id", "seq") where "asset_id" is not null`,
    `create index if not exists "changes_scan_idx" on "changes" ("tenant_id", "scan_id", "seq") where "scan_id" is not null`,
    `create index if not exists "changes_at_idx" on "changes" ("tenant_id", "at", "seq")`,
    `create table if not exists "change_captures" ("tenant_id" text not null, "kind" text not null, "asset_id" text not null, "item" text not null, "state" text, "lifecycle" text, "primary_asset_id" text, "first_observed_at" text, "record" text, constraint "change_captures_pkey" primary key ("tenant_id", "kind", "asset_id", "item")) without rowid`,
    `create table if not exists "resolved_findings" ("tenant_id" text not null, "asset_id" text not null, "vulnerability_id" text not null, "first_observed_at" text not null, "resolved_at" text not null, constraint "resolved_findings_pkey" primary key ("tenant_id", "asset_id", "vulnerability_id")) without rowid`,
  ],
  postgres: [
    `alter table "tenants" add column "change_seq" bigint default 0 not null`,
    `alter table "tenants" add column "changes_pruned_seq" bigint default 0 not null`,
    `create table if not exists "changes" ("tenant_id" text not null collate "C", "seq" bigint not null, "at" text not null collate "C", "type" text not null collate "C", "asset_id" text collate "C", "vulnerability_id" text collate "C", "risk_id" text collate "C", "scan_id" text collate "C", "cause" text not null, "before" text collate "C", "after" text collate "C", "record" text, constraint "changes_pkey" primary key ("tenant_id", "seq"))`,
    `create index if not exists "changes_asset_idx" on "changes" ("tenant_id", "asset_id", "seq") where "asset_id" is not null`,
    `create index if not exists "changes_scan_idx" on "changes" ("tenant_id", "scan_id", "seq") where "scan_id" is not null`,
    `create index if not exists "changes_at_idx" on "changes" ("tenant_id", "at", "seq")`,
    `create table if not exists "change_captures" ("tenant_id" text not null collate "C", "kind" text not null collate "C", "asset_id" text not null collate "C", "item" text not null collate "C", "state" text collate "C", "lifecycle" text collate "C", "primary_asset_id" text collate "C", "first_observed_at" text collate "C", "record" text, constraint "change_captures_pkey" primary key ("tenant_id", "kind", "asset_id", "item"))`,
    `create table if not exists "resolved_findings" ("tenant_id" text not null collate "C", "asset_id" text not null collate "C", "vulnerability_id" text not null collate "C", "first_observed_at" text not null collate "C", "resolved_at" text not null collate "C", constraint "resolved_findings_pkey" primary key ("tenant_id", "asset_id", "vulnerability_id"))`,
    `grant select on changes, change_captures, resolved_findings to secinv_api`,
    ...tenantTables.flatMap((table) => [
      `alter table ${table} enable row level security`,
      `alter table ${table} force row level security`,
      `create policy tenant_isolation on ${table} to secinv_api using (tenant_id = current_setting('secinv.tenant_id', true))`,
      `create policy owner_access on ${table} to current_user using (true) with check (true)`,
    ]),
  ],
};
