// Migration 0019_scans_and_key_scopes: what a key may do (`scopes`, a comma list; every existing key keeps `read`), and
// scans uploaded over HTTP (pipeline.md §2, docs/DESIGN.md §97): `scans` holds each scan's record for as long as it is
// kept, `scan_queue` the scans not yet ended in acceptance order with their claims, `scan_bodies` on PostgreSQL the
// uploaded bytes until their scan ends (SQLite keeps them in a spool folder beside the database). The API role
// accepts uploads: it inserts a tenant's scans and bodies under row-level security, and queue entries of the same tenant,
// which it cannot read. Frozen: the SQL it ran when it was released, per dialect.
import type { FrozenMigration } from './frozen.js';

export const migration: FrozenMigration = {
  sqlite: [
    `alter table "api_keys" add column "scopes" text default 'read' not null`,
    `create table if not exists "scans" ("tenant_id" text not null, "id" text not null, "status" text not null, "name" text, "format" text, "options" text not null, "size_bytes" integer not null, "sha256" text not null, "key_id" text, "idempotency_key" text, "request_hash" text, "submitted_at" text not null, "started_at" text, "finished_at" text, "summary" text, "gate" text, "problems" text not null, constraint "scans_pkey" primary key ("tenant_id", "id"))`,
    `create index if not exists "scans_submitted_at_idx" on "scans" ("tenant_id", "submitted_at", "id")`,
    `create unique index if not exists "scans_idempotency_key_key" on "scans" ("tenant_id", "idempotency_key") where "idempotency_key" is not null`,
    `create table if not exists "scan_queue" ("seq" integer primary key autoincrement, "tenant_id" text not null, "scan_id" text not null, "owner" text, "claimed_until" text, "attempts" integer default 0 not null)`,
    `create index if not exists "scan_queue_tenant_id_idx" on "scan_queue" ("tenant_id", "seq")`,
    `create table if not exists "scan_bodies" ("tenant_id" text not null, "scan_id" text not null, "part" integer not null, "bytes" blob not null, constraint "scan_bodies_pkey" primary key ("tenant_id", "scan_id", "part"))`,
  ],
  postgres: [
    `alter table "api_keys" add column "scopes" text collate "C" default 'read' not null`,
    `create table if not exists "scans" ("tenant_id" text not null collate "C", "id" text not null collate "C", "status" text not null collate "C", "name" text, "format" text collate "C", "options" text not null, "size_bytes" bigint not null, "sha256" text not null collate "C", "key_id" text collate "C", "idempotency_key" text collate "C", "request_hash" text collate "C", "submitted_at" text not null collate "C", "started_at" text collate "C", "finished_at" text collate "C", "summary" text, "gate" text, "problems" text not null, constraint "scans_pkey" primary key ("tenant_id", "id"))`,
    `create index if not exists "scans_submitted_at_idx" on "scans" ("tenant_id", "submitted_at", "id")`,
    `create unique index if not exists "scans_idempotency_key_key" on "scans" ("tenant_id", "idempotency_key") where "idempotency_key" is not null`,
    `create table if not exists "scan_queue" ("seq" bigserial primary key, "tenant_id" text not null collate "C", "scan_id" text not null collate "C", "owner" text collate "C", "claimed_until" text collate "C", "attempts" integer default 0 not null)`,
    `create index if not exists "scan_queue_tenant_id_idx" on "scan_queue" ("tenant_id", "seq")`,
    `create table if not exists "scan_bodies" ("tenant_id" text not null collate "C", "scan_id" text not null collate "C", "part" integer not null, "bytes" bytea not null, constraint "scan_bodies_pkey" primary key ("tenant_id", "scan_id", "part"))`,
    `grant select, insert, update (idempotency_key) on scans to secinv_api`,
    `grant select, insert on scan_bodies to secinv_api`,
    `grant insert on scan_queue to secinv_api`,
    `grant usage on sequence scan_queue_seq_seq to secinv_api`,
    `alter table scans enable row level security`,
    `alter table scans force row level security`,
    `create policy tenant_isolation on scans to secinv_api using (tenant_id = current_setting('secinv.tenant_id', true))`,
    `create policy owner_access on scans to current_user using (true) with check (true)`,
    `alter table scan_bodies enable row level security`,
    `alter table scan_bodies force row level security`,
    `create policy tenant_isolation on scan_bodies to secinv_api using (tenant_id = current_setting('secinv.tenant_id', true))`,
    `create policy owner_access on scan_bodies to current_user using (true) with check (true)`,
    `alter table scan_queue enable row level security`,
    `alter table scan_queue force row level security`,
    `create policy tenant_isolation on scan_queue for insert to secinv_api with check (tenant_id = current_setting('secinv.tenant_id', true))`,
    `create policy owner_access on scan_queue to current_user using (true) with check (true)`,
  ],
};
