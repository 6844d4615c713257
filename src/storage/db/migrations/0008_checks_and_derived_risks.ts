// Migration 0008_checks_and_derived_risks: the failed configuration checks a scanner reported on an asset (Prowler,
// Trivy misconfigurations), which the risk rules turn into risks; which risks the rules derived (they replace those
// on every derivation, never a risk an import file brought); the lifecycle state a user gave a risk, remembered by risk
// id so that a derived risk that leaves and comes back keeps it; and which assets came from a scanner (their riskScore
// is derived from their risks, docs/RISKS.md).
// Frozen: the SQL it ran when it was released, per dialect. Never edit it; change the schema with a new migration.
import type { FrozenMigration } from './frozen.js';

export const migration: FrozenMigration = {
  sqlite: [
    `create table if not exists "checks" ("tenant_id" text not null, "asset_id" text not null, "source" text not null, "check_id" text not null, "severity_level_value" integer not null, "first_observed_at" text not null, "last_observed_at" text not null, "doc" text not null, constraint "checks_pkey" primary key ("tenant_id", "asset_id", "source", "check_id"))`,
    `alter table "risks" add column "derived" integer default 0 not null`,
    `create index if not exists "risks_primary_asset_id_idx" on "risks" ("tenant_id", "primary_asset_id")`,
    `create table if not exists "risk_states" ("tenant_id" text not null, "risk_id" text not null, "lifecycle_state" text not null, "changed_at" text not null, constraint "risk_states_pkey" primary key ("tenant_id", "risk_id"))`,
    `alter table "assets" add column "scanned" integer default 0 not null`,
    `update "assets" set "scanned" = 1 where "raw_data" like '%"secinvScans":%'`,
  ],
  postgres: [
    `create table if not exists "checks" ("tenant_id" text not null collate "C", "asset_id" text not null collate "C", "source" text not null collate "C", "check_id" text not null collate "C", "severity_level_value" integer not null, "first_observed_at" text not null collate "C", "last_observed_at" text not null collate "C", "doc" text not null collate "C", constraint "checks_pkey" primary key ("tenant_id", "asset_id", "source", "check_id"))`,
    `alter table "risks" add column "derived" integer default 0 not null`,
    `create index if not exists "risks_primary_asset_id_idx" on "risks" ("tenant_id", "primary_asset_id")`,
    `create table if not exists "risk_states" ("tenant_id" text not null collate "C", "risk_id" text not null collate "C", "lifecycle_state" text not null collate "C", "changed_at" text not null collate "C", constraint "risk_states_pkey" primary key ("tenant_id", "risk_id"))`,
    `alter table "assets" add column "scanned" integer default 0 not null`,
    `update "assets" set "scanned" = 1 where "raw_data" like '%"secinvScans":%'`,
    `grant select on checks, risk_states to secinv_api`,
    `alter table checks enable row level security`,
    `alter table checks force row level security`,
    `create policy tenant_isolation on checks to secinv_api using (tenant_id = current_setting('secinv.tenant_id', true))`,
    `create policy owner_access on checks to current_user using (true) with check (true)`,
    `alter table risk_states enable row level security`,
    `alter table risk_states force row level security`,
    `create policy tenant_isolation on risk_states to secinv_api using (tenant_id = current_setting('secinv.tenant_id', true))`,
    `create policy owner_access on risk_states to current_user using (true) with check (true)`,
  ],
};
