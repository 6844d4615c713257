// Migration 0007_vex_and_purls: each package's purl as a matching key (type, namespace, name, version), and the VEX
// statements of each tenant, kept so that assets scanned after a VEX document was loaded are matched too.
// Frozen: the SQL it ran when it was released, per dialect. Never edit it; change the schema with a new migration.
import type { FrozenMigration } from './frozen.js';

export const migration: FrozenMigration = {
  sqlite: [
    `alter table "vulnerability_packages" add column "purl" text`,
    `create index if not exists "vulnerability_packages_purl_idx" on "vulnerability_packages" ("tenant_id", "purl")`,
    `create table if not exists "vex_statements" ("tenant_id" text not null, "document_id" text not null, "vulnerability_id" text not null, "product" text not null, "exempting" integer not null, "statement" text not null, constraint "vex_statements_pkey" primary key ("tenant_id", "document_id", "vulnerability_id", "product"))`,
  ],
  postgres: [
    `alter table "vulnerability_packages" add column "purl" text collate "C"`,
    `create index if not exists "vulnerability_packages_purl_idx" on "vulnerability_packages" ("tenant_id", "purl")`,
    `create table if not exists "vex_statements" ("tenant_id" text not null collate "C", "document_id" text not null collate "C", "vulnerability_id" text not null collate "C", "product" text not null collate "C", "exempting" integer not null, "statement" text not null collate "C", constraint "vex_statements_pkey" primary key ("tenant_id", "document_id", "vulnerability_id", "product"))`,
    `grant select on vex_statements to secinv_api`,
    `alter table vex_statements enable row level security`,
    `alter table vex_statements force row level security`,
    `create policy tenant_isolation on vex_statements to secinv_api using (tenant_id = current_setting('secinv.tenant_id', true))`,
    `create policy owner_access on vex_statements to current_user using (true) with check (true)`,
  ],
};
