// Migration 0012_deferrable_keys: a finding's packages and aliases are keyed by a unique index instead of a primary
// key constraint, so that a first import can build that index once at its end, as it builds the others
// (src/storage/write/deferred-indexes.ts, docs/DESIGN.md §49). Their keys start with the asset id, in the random order of the
// assets, and inserting 1.3M packages into that key one by one cost 10 s of a 1M-finding import. SQLite cannot drop a
// table's constraint, so both tables are built again there, each row keeping its values, with their indexes as 0001,
// 0004, 0006 and 0007 spelled them. Frozen: the SQL it ran when it was released, per dialect.
import { sql, type Kysely } from 'kysely';
import type { FrozenMigration } from './frozen.js';

const PACKAGE_COLUMNS = `"tenant_id", "asset_id", "vulnerability_id", "position", "package_name", "target_name", "target_type", "target_class", "purl"`;

/** The planner's statistics of the rebuilt tables, where the database keeps statistics at all (a first import's). */
const analyzeIfKept = async (db: Kysely<unknown>): Promise<void> => {
  const { rows } = await sql`select 1 from sqlite_master where name = 'sqlite_stat1'`.execute(db);
  if (rows.length === 0) return;
  await sql`analyze "vulnerability_packages"`.execute(db);
  await sql`analyze "vulnerability_aliases"`.execute(db);
};

export const migration: FrozenMigration = {
  sqlite: [
    `create table "vulnerability_packages_0012" ("tenant_id" text not null, "asset_id" text not null, "vulnerability_id" text not null, "position" integer not null, "package_name" text, "target_name" text, "target_type" text, "target_class" text, "purl" text)`,
    `insert into "vulnerability_packages_0012" (${PACKAGE_COLUMNS}) select ${PACKAGE_COLUMNS} from "vulnerability_packages" order by "tenant_id", "asset_id", "vulnerability_id", "position"`,
    `drop table "vulnerability_packages"`,
    `alter table "vulnerability_packages_0012" rename to "vulnerability_packages"`,
    `create unique index "vulnerability_packages_key_idx" on "vulnerability_packages" ("tenant_id", "asset_id", "vulnerability_id", "position")`,
    `create index "vulnerability_packages_package_name_idx" on "vulnerability_packages" ("tenant_id", "package_name")`,
    `create index "vulnerability_packages_target_name_idx" on "vulnerability_packages" ("tenant_id", "target_name")`,
    `create index "vulnerability_packages_purl_idx" on "vulnerability_packages" ("tenant_id", "purl")`,
    `create table "vulnerability_aliases_0012" ("tenant_id" text not null, "asset_id" text not null, "vulnerability_id" text not null, "alias" text not null)`,
    `insert into "vulnerability_aliases_0012" ("tenant_id", "asset_id", "vulnerability_id", "alias") select "tenant_id", "asset_id", "vulnerability_id", "alias" from "vulnerability_aliases" order by "tenant_id", "asset_id", "vulnerability_id", "alias"`,
    `drop table "vulnerability_aliases"`,
    `alter table "vulnerability_aliases_0012" rename to "vulnerability_aliases"`,
    `create unique index "vulnerability_aliases_key_idx" on "vulnerability_aliases" ("tenant_id", "asset_id", "vulnerability_id", "alias")`,
    `create index "vulnerability_aliases_alias_idx" on "vulnerability_aliases" ("tenant_id", "alias")`,
    analyzeIfKept,
  ],
  postgres: [
    `alter table "vulnerability_packages" drop constraint "vulnerability_packages_pkey"`,
    `create unique index "vulnerability_packages_key_idx" on "vulnerability_packages" ("tenant_id", "asset_id", "vulnerability_id", "position")`,
    `alter table "vulnerability_aliases" drop constraint "vulnerability_aliases_pkey"`,
    `create unique index "vulnerability_aliases_key_idx" on "vulnerability_aliases" ("tenant_id", "asset_id", "vulnerability_id", "alias")`,
  ],
};
