// Migration 0021_webhooks: alerts by webhook (pipeline.md §5, docs/DESIGN.md §104). `webhooks` holds each endpoint:
// its destination, filters and sealed secret, the log position through which its changes were delivered, the batch
// being tried (through `batch_through`, with its failures) and the claim of the server process sending it; global,
// like `scan_queue`, since a claim looks across tenants, and never read by the API role (it holds the secrets).
// `webhook_attempts` holds each endpoint's recent attempts, per tenant. The key that seals the secrets is a row of
// `server_secrets`, made here once per database. Frozen: the SQL it ran when it was released, per dialect.
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import type { FrozenMigration, Step } from './frozen.js';

/** A random AES-256 key, made once per database, that seals the webhooks' signing secrets. */
const insertWebhookKey: Step = async (db) => {
  await sql`insert into "server_secrets" ("name", "value") values (${'webhook_key'}, ${randomBytes(32).toString('hex')}) on conflict do nothing`.execute(
    db,
  );
};

export const migration: FrozenMigration = {
  sqlite: [
    `create table if not exists "webhooks" ("id" text not null, "tenant_id" text not null, "url" text not null, "description" text, "types" text, "min_severity" text, "kev" integer default 0 not null, "exploit" integer default 0 not null, "secret" text not null, "created_at" text not null, "enabled" integer default 1 not null, "disabled_at" text, "disabled_reason" text, "delivered_seq" integer not null, "batch_through" integer, "failures" integer default 0 not null, "failing_since" text, "next_attempt_at" text, "owner" text, "claimed_until" text, "attempt_seq" integer default 0 not null, constraint "webhooks_pkey" primary key ("id")) without rowid`,
    `create index if not exists "webhooks_tenant_id_idx" on "webhooks" ("tenant_id", "id")`,
    `create table if not exists "webhook_attempts" ("tenant_id" text not null, "webhook_id" text not null, "seq" integer not null, "at" text not null, "delivery_id" text not null, "kind" text not null, "changes" integer not null, "status" integer, "duration_ms" integer not null, "error" text, constraint "webhook_attempts_pkey" primary key ("tenant_id", "webhook_id", "seq")) without rowid`,
    insertWebhookKey,
  ],
  postgres: [
    `create table if not exists "webhooks" ("id" text not null collate "C", "tenant_id" text not null collate "C", "url" text not null, "description" text, "types" text collate "C", "min_severity" text collate "C", "kev" integer default 0 not null, "exploit" integer default 0 not null, "secret" text not null collate "C", "created_at" text not null collate "C", "enabled" integer default 1 not null, "disabled_at" text collate "C", "disabled_reason" text, "delivered_seq" bigint not null, "batch_through" bigint, "failures" integer default 0 not null, "failing_since" text collate "C", "next_attempt_at" text collate "C", "owner" text collate "C", "claimed_until" text collate "C", "attempt_seq" bigint default 0 not null, constraint "webhooks_pkey" primary key ("id"))`,
    `create index if not exists "webhooks_tenant_id_idx" on "webhooks" ("tenant_id", "id")`,
    `create table if not exists "webhook_attempts" ("tenant_id" text not null collate "C", "webhook_id" text not null collate "C", "seq" bigint not null, "at" text not null collate "C", "delivery_id" text not null collate "C", "kind" text not null collate "C", "changes" integer not null, "status" integer, "duration_ms" integer not null, "error" text, constraint "webhook_attempts_pkey" primary key ("tenant_id", "webhook_id", "seq"))`,
    insertWebhookKey,
    `grant select on webhook_attempts to secinv_api`,
    `alter table webhook_attempts enable row level security`,
    `alter table webhook_attempts force row level security`,
    `create policy tenant_isolation on webhook_attempts to secinv_api using (tenant_id = current_setting('secinv.tenant_id', true))`,
    `create policy owner_access on webhook_attempts to current_user using (true) with check (true)`,
  ],
};
