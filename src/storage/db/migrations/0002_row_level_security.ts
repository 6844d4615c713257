// Migration 0002_row_level_security: PostgreSQL only: the API role and row-level security on every tenant table.
// Frozen: the SQL it ran when it was released, per dialect. Never edit it; change the schema with a new migration.
import type { FrozenMigration } from './frozen.js';

export const migration: FrozenMigration = {
  sqlite: [],
  postgres: [
    `do $$ begin
      create role secinv_api login nosuperuser nobypassrls nocreatedb nocreaterole;
    exception when duplicate_object or unique_violation then
      -- An existing role keeps (or gets back) exactly these attributes, when the migrating user may set them.
      begin alter role secinv_api login nosuperuser nobypassrls; exception when insufficient_privilege then null; end;
    end $$`,
    `do $$ begin execute format('grant usage on schema %I to secinv_api', current_schema()); end $$`,
    `grant select on tenants, environments, integrations, asset_groups, asset_group_members, exemptions, assets, vulnerabilities, vulnerability_packages, vulnerability_exemptions, risks to secinv_api`,
    `grant select, update (last_used_at) on api_keys to secinv_api`,
    `alter table environments enable row level security`,
    `alter table environments force row level security`,
    `create policy tenant_isolation on environments to secinv_api using (tenant_id = current_setting('secinv.tenant_id', true))`,
    `create policy owner_access on environments to current_user using (true) with check (true)`,
    `alter table integrations enable row level security`,
    `alter table integrations force row level security`,
    `create policy tenant_isolation on integrations to secinv_api using (tenant_id = current_setting('secinv.tenant_id', true))`,
    `create policy owner_access on integrations to current_user using (true) with check (true)`,
    `alter table asset_groups enable row level security`,
    `alter table asset_groups force row level security`,
    `create policy tenant_isolation on asset_groups to secinv_api using (tenant_id = current_setting('secinv.tenant_id', true))`,
    `create policy owner_access on asset_groups to current_user using (true) with check (true)`,
    `alter table asset_group_members enable row level security`,
    `alter table asset_group_members force row level security`,
    `create policy tenant_isolation on asset_group_members to secinv_api using (tenant_id = current_setting('secinv.tenant_id', true))`,
    `create policy owner_access on asset_group_members to current_user using (true) with check (true)`,
    `alter table exemptions enable row level security`,
    `alter table exemptions force row level security`,
    `create policy tenant_isolation on exemptions to secinv_api using (tenant_id = current_setting('secinv.tenant_id', true))`,
    `create policy owner_access on exemptions to current_user using (true) with check (true)`,
    `alter table assets enable row level security`,
    `alter table assets force row level security`,
    `create policy tenant_isolation on assets to secinv_api using (tenant_id = current_setting('secinv.tenant_id', true))`,
    `create policy owner_access on assets to current_user using (true) with check (true)`,
    `alter table vulnerabilities enable row level security`,
    `alter table vulnerabilities force row level security`,
    `create policy tenant_isolation on vulnerabilities to secinv_api using (tenant_id = current_setting('secinv.tenant_id', true))`,
    `create policy owner_access on vulnerabilities to current_user using (true) with check (true)`,
    `alter table vulnerability_packages enable row level security`,
    `alter table vulnerability_packages force row level security`,
    `create policy tenant_isolation on vulnerability_packages to secinv_api using (tenant_id = current_setting('secinv.tenant_id', true))`,
    `create policy owner_access on vulnerability_packages to current_user using (true) with check (true)`,
    `alter table vulnerability_exemptions enable row level security`,
    `alter table vulnerability_exemptions force row level security`,
    `create policy tenant_isolation on vulnerability_exemptions to secinv_api using (tenant_id = current_setting('secinv.tenant_id', true))`,
    `create policy owner_access on vulnerability_exemptions to current_user using (true) with check (true)`,
    `alter table risks enable row level security`,
    `alter table risks force row level security`,
    `create policy tenant_isolation on risks to secinv_api using (tenant_id = current_setting('secinv.tenant_id', true))`,
    `create policy owner_access on risks to current_user using (true) with check (true)`,
  ],
};
