// Migration 0003_risk_indexes_and_secrets: risk lookups by their selective filters, and the per-database secrets table with the cursor-signing key.
// Frozen: the SQL it ran when it was released, per dialect. Never edit it; change the schema with a new migration.
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import type { FrozenMigration, Step } from './frozen.js';

/** A random key, made once per database, that signs list cursors; every process of one database reads the same one. */
const insertCursorKey: Step = async (db) => {
  await sql`insert into "server_secrets" ("name", "value") values (${'cursor_key'}, ${randomBytes(32).toString('hex')}) on conflict do nothing`.execute(
    db,
  );
};

export const migration: FrozenMigration = {
  sqlite: [
    `create index if not exists "risks_primary_asset_id_id_idx" on "risks" ("tenant_id", "primary_asset_id", "id")`,
    `create index if not exists "risks_risk_type_id_id_idx" on "risks" ("tenant_id", "risk_type_id", "id")`,
    `create index if not exists "risks_integration_id_id_idx" on "risks" ("tenant_id", "integration_id", "id")`,
    `create table if not exists "server_secrets" ("name" text primary key, "value" text not null)`,
    insertCursorKey,
  ],
  postgres: [
    `create index if not exists "risks_primary_asset_id_id_idx" on "risks" ("tenant_id", "primary_asset_id", "id")`,
    `create index if not exists "risks_risk_type_id_id_idx" on "risks" ("tenant_id", "risk_type_id", "id")`,
    `create index if not exists "risks_integration_id_id_idx" on "risks" ("tenant_id", "integration_id", "id")`,
    `create table if not exists "server_secrets" ("name" text primary key, "value" text not null)`,
    insertCursorKey,
    `grant select on server_secrets to secinv_api`,
  ],
};
