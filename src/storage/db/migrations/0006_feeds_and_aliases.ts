// Migration 0006_feeds_and_aliases: the threat-intel feeds shared by every tenant (CISA KEV, Exploit-DB, FIRST EPSS,
// and when each was loaded), each finding's aliases (the other ids of the same flaw, joined to the feeds), and the
// intel fields a finding's own file gave, kept apart so that a reloaded feed can only add to them. Findings imported
// before this migration get their own intel from their stored document.
// Frozen: the SQL it ran when it was released, per dialect. Never edit it; change the schema with a new migration.
import type { FrozenMigration } from './frozen.js';

export const migration: FrozenMigration = {
  sqlite: [
    `create table if not exists "feeds" ("feed" text not null, "version" text, "entries" integer not null, "loaded_at" text not null, "source" text, constraint "feeds_pkey" primary key ("feed"))`,
    `create table if not exists "feed_kev" ("cve_id" text not null, "entry" text not null, constraint "feed_kev_pkey" primary key ("cve_id"))`,
    `create table if not exists "feed_exploits" ("cve_id" text not null, "exploit_id" text not null, "entry" text not null, constraint "feed_exploits_pkey" primary key ("cve_id", "exploit_id"))`,
    `create table if not exists "feed_epss" ("cve_id" text not null, "epss" real not null, "percentile" real not null, constraint "feed_epss_pkey" primary key ("cve_id"))`,
    `create table if not exists "vulnerability_aliases" ("tenant_id" text not null, "asset_id" text not null, "vulnerability_id" text not null, "alias" text not null, constraint "vulnerability_aliases_pkey" primary key ("tenant_id", "asset_id", "vulnerability_id", "alias"))`,
    `create index if not exists "vulnerability_aliases_alias_idx" on "vulnerability_aliases" ("tenant_id", "alias")`,
    `alter table "vulnerabilities" add column "own_intel" text`,
    `update "vulnerabilities" set "own_intel" = cast("doc" as text) where "source" is null and ("has_kev" = 1 or "has_exploit" = 1)`,
  ],
  postgres: [
    `create table if not exists "feeds" ("feed" text not null collate "C", "version" text collate "C", "entries" integer not null, "loaded_at" text not null collate "C", "source" text collate "C", constraint "feeds_pkey" primary key ("feed"))`,
    `create table if not exists "feed_kev" ("cve_id" text not null collate "C", "entry" text not null collate "C", constraint "feed_kev_pkey" primary key ("cve_id"))`,
    `create table if not exists "feed_exploits" ("cve_id" text not null collate "C", "exploit_id" text not null collate "C", "entry" text not null collate "C", constraint "feed_exploits_pkey" primary key ("cve_id", "exploit_id"))`,
    `create table if not exists "feed_epss" ("cve_id" text not null collate "C", "epss" double precision not null, "percentile" double precision not null, constraint "feed_epss_pkey" primary key ("cve_id"))`,
    `create table if not exists "vulnerability_aliases" ("tenant_id" text not null collate "C", "asset_id" text not null collate "C", "vulnerability_id" text not null collate "C", "alias" text not null collate "C", constraint "vulnerability_aliases_pkey" primary key ("tenant_id", "asset_id", "vulnerability_id", "alias"))`,
    `create index if not exists "vulnerability_aliases_alias_idx" on "vulnerability_aliases" ("tenant_id", "alias")`,
    `alter table "vulnerabilities" add column "own_intel" text collate "C"`,
    `update "vulnerabilities" set "own_intel" = convert_from("doc", 'UTF8') where "source" is null and ("has_kev" = 1 or "has_exploit" = 1)`,
    `grant select on vulnerability_aliases to secinv_api`,
    `alter table vulnerability_aliases enable row level security`,
    `alter table vulnerability_aliases force row level security`,
    `create policy tenant_isolation on vulnerability_aliases to secinv_api using (tenant_id = current_setting('secinv.tenant_id', true))`,
    `create policy owner_access on vulnerability_aliases to current_user using (true) with check (true)`,
  ],
};
