// Migration 0009_asset_documents: an asset's documents (the stored API object, its raw data and the text the
// `metadata` filter searches) move from `assets` to a table of their own, so that the rows every filter, sort and count
// reads are ~0.6 KB instead of ~3.7 KB (docs/DESIGN.md §26). On PostgreSQL `drop column` leaves the bytes in place
// until a row is rewritten (`vacuum full assets` reclaims them at once); those columns were TOASTed there anyway.
// Frozen: the SQL it ran when it was released, per dialect. Never edit it; change the schema with a new migration.
import type { FrozenMigration } from './frozen.js';

export const migration: FrozenMigration = {
  sqlite: [
    `create table if not exists "asset_documents" ("tenant_id" text not null, "asset_id" text not null, "doc" blob not null, "raw_data" text not null, "meta_search" text not null, constraint "asset_documents_pkey" primary key ("tenant_id", "asset_id"))`,
    `insert into "asset_documents" ("tenant_id", "asset_id", "doc", "raw_data", "meta_search") select "tenant_id", "id", "doc", "raw_data", "meta_search" from "assets" order by "tenant_id", "id"`,
    `alter table "assets" drop column "doc"`,
    `alter table "assets" drop column "raw_data"`,
    `alter table "assets" drop column "meta_search"`,
  ],
  postgres: [
    `create table if not exists "asset_documents" ("tenant_id" text not null collate "C", "asset_id" text not null collate "C", "doc" bytea not null, "raw_data" text not null collate "C", "meta_search" text not null collate "C", constraint "asset_documents_pkey" primary key ("tenant_id", "asset_id"))`,
    `insert into "asset_documents" ("tenant_id", "asset_id", "doc", "raw_data", "meta_search") select "tenant_id", "id", "doc", "raw_data", "meta_search" from "assets" order by "tenant_id", "id"`,
    `alter table "assets" drop column "doc", drop column "raw_data", drop column "meta_search"`,
    `grant select on asset_documents to secinv_api`,
    `alter table asset_documents enable row level security`,
    `alter table asset_documents force row level security`,
    `create policy tenant_isolation on asset_documents to secinv_api using (tenant_id = current_setting('secinv.tenant_id', true))`,
    `create policy owner_access on asset_documents to current_user using (true) with check (true)`,
  ],
};
