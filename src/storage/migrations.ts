// Schema migrations, run automatically by every command that opens the database. Written once with Kysely's schema
// builder for both dialects; the only dialect differences are the column types in `types` below.
import { sql, type Kysely, type Migration, type MigrationProvider, type ColumnDefinitionBuilder, type CreateTableBuilder } from 'kysely';
import { randomBytes } from 'node:crypto';
import { API_ROLE } from './roles.js';
import { sqlDialects, type Dialect } from './dialect.js';

type ColumnKind = 'text' | 'int' | 'bigint' | 'real' | 'blob';
type Columns = Record<string, `${ColumnKind}${'' | '?'}`>;

/** Creates a tenant table: every primary key and index leads with tenant_id (scale-out by tenant). */
function table(db: Kysely<unknown>, dialect: Dialect, name: string, columns: Columns, primaryKey: string[]): CreateTableBuilder<string, string> {
  let builder = db.schema.createTable(name).ifNotExists();
  for (const [column, spec] of Object.entries(columns)) {
    const nullable = spec.endsWith('?');
    const kind = spec.replace('?', '') as ColumnKind;
    builder = builder.addColumn(column, sql.raw(columnType(dialect, kind)), (c: ColumnDefinitionBuilder) => {
      // PostgreSQL compares text by code point only with the "C" collation, as SQLite does by default.
      let col = kind === 'text' && dialect === 'postgres' ? c.modifyEnd(sql`collate "C"`) : c;
      if (!nullable) col = col.notNull();
      return col;
    });
  }
  return builder.addPrimaryKeyConstraint(`${name}_pkey`, primaryKey as never);
}

function columnType(dialect: Dialect, kind: ColumnKind): string {
  const types: Record<Dialect, Record<ColumnKind, string>> = {
    sqlite: { text: 'text', int: 'integer', bigint: 'integer', real: 'real', blob: 'blob' },
    postgres: { text: 'text', int: 'integer', bigint: 'bigint', real: 'double precision', blob: 'bytea' },
  };
  return types[dialect][kind];
}

async function index(db: Kysely<unknown>, table: string, columns: string[], name = `${table}_${columns.slice(1).join('_')}_idx`): Promise<void> {
  await db.schema.createIndex(name).ifNotExists().on(table).columns(columns).execute();
}

const initial = (dialect: Dialect): Migration => ({
  async up(db) {
    await db.schema.createTable('tenants').ifNotExists()
      .addColumn('tenant_id', sql.raw(columnType(dialect, 'text')), (c) => c.primaryKey())
      .addColumn('organization_id', 'text', (c) => c.notNull())
      .addColumn('name', 'text')
      .addColumn('data_version', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await table(db, dialect, 'environments', {
      tenant_id: 'text', environment_id: 'text', environment_id_lc: 'text', name: 'text?', is_production: 'int',
    }, ['tenant_id', 'environment_id']).execute();
    await table(db, dialect, 'integrations', {
      tenant_id: 'text', integration_id: 'text', environment_id: 'text?', doc: 'blob',
    }, ['tenant_id', 'integration_id']).execute();
    await table(db, dialect, 'asset_groups', { tenant_id: 'text', asset_group_id: 'text', name: 'text?' }, ['tenant_id', 'asset_group_id']).execute();
    await table(db, dialect, 'asset_group_members', { tenant_id: 'text', asset_group_id: 'text', asset_id: 'text' }, ['tenant_id', 'asset_group_id', 'asset_id']).execute();
    await index(db, 'asset_group_members', ['tenant_id', 'asset_id', 'asset_group_id']);
    await table(db, dialect, 'exemptions', { tenant_id: 'text', exemption_id: 'text', doc: 'text' }, ['tenant_id', 'exemption_id']).execute();

    await table(db, dialect, 'assets', {
      tenant_id: 'text', id: 'text', integration_id: 'text?', execution_id: 'bigint?', provider: 'text', name: 'text?',
      name_lc: 'text?', region: 'text?', service: 'text?', service_lc: 'text?', service_name_lc: 'text?',
      resource_type: 'text?', first_observed_at: 'text', last_observed_at: 'text', risk_score: 'real?',
      operational_state: 'text?', is_publicly_exposed: 'int', has_admin_privileges: 'int',
      has_overly_permissive_privileges: 'int', is_susceptible_to_privilege_escalation: 'int',
      n_low_secrets: 'int', n_medium_secrets: 'int', n_high_secrets: 'int', n_critical_secrets: 'int',
      n_low: 'int', n_medium: 'int', n_high: 'int', n_critical: 'int', vulnerability_score: 'real',
      is_vulnerable: 'int', has_kev: 'int', has_exploit: 'int', is_exploitable: 'int',
      tags: 'text', meta_search: 'text', doc: 'blob', raw_data: 'text',
    }, ['tenant_id', 'id']).execute();
    // One index per sort key, ending in id for the tie-break; the filters on these columns use them too.
    for (const column of [
      'execution_id', 'integration_id', 'resource_type', 'service', 'region', 'name', 'provider', 'first_observed_at',
      'last_observed_at', 'risk_score', 'vulnerability_score', 'n_low', 'n_medium', 'n_high', 'n_critical',
    ]) {
      await index(db, 'assets', ['tenant_id', column, 'id']);
    }
    // Nullable sort keys sort nulls last both ways; one direction needs its own index on each database.
    for (const column of ['execution_id', 'integration_id', 'resource_type', 'service', 'region', 'name', 'risk_score']) {
      await db.schema.createIndex(`assets_${column}_nulls_last_idx`).ifNotExists().on('assets')
        .expression(sql.raw(`tenant_id, ${sqlDialects[dialect].nullsLastIndex(column)}`)).execute();
    }
    await index(db, 'assets', ['tenant_id', 'service_lc', 'id']);
    await index(db, 'assets', ['tenant_id', 'service_name_lc', 'id']);

    await table(db, dialect, 'vulnerabilities', {
      tenant_id: 'text', asset_id: 'text', vulnerability_id: 'text', integration_id: 'text?', execution_id: 'text?',
      provider: 'text?', severity_level_value: 'int', has_kev: 'int', has_exploit: 'int', is_exploitable: 'int',
      has_vendor_fix: 'int', is_exempted: 'int', first_observed_at: 'text', last_observed_at: 'text', doc: 'blob',
    }, ['tenant_id', 'asset_id', 'vulnerability_id']).execute();
    await table(db, dialect, 'vulnerability_packages', {
      tenant_id: 'text', asset_id: 'text', vulnerability_id: 'text', position: 'int', package_name: 'text?',
      target_name: 'text?', target_type: 'text?', target_class: 'text?',
    }, ['tenant_id', 'asset_id', 'vulnerability_id', 'position']).execute();
    await index(db, 'vulnerability_packages', ['tenant_id', 'package_name']);
    await table(db, dialect, 'vulnerability_exemptions', {
      tenant_id: 'text', asset_id: 'text', vulnerability_id: 'text', exemption_id: 'text',
    }, ['tenant_id', 'asset_id', 'vulnerability_id', 'exemption_id']).execute();

    await table(db, dialect, 'risks', {
      tenant_id: 'text', id: 'text', risk_type_id: 'text?', integration_id: 'text?', primary_asset_id: 'text?',
      severity_level: 'text', lifecycle_state: 'text', resource_type: 'text?', discovered_at: 'text', score: 'real',
      doc: 'blob',
    }, ['tenant_id', 'id']).execute();
    await index(db, 'risks', ['tenant_id', 'discovered_at', 'id']);
    await index(db, 'risks', ['tenant_id', 'score', 'id']);

    await table(db, dialect, 'api_keys', {
      id: 'text', tenant_id: 'text', name: 'text?', prefix: 'text', key_hash: 'text', created_at: 'text',
      expires_at: 'text?', revoked_at: 'text?', last_used_at: 'text?',
    }, ['id']).execute();
    await db.schema.createIndex('api_keys_key_hash_key').ifNotExists().unique().on('api_keys').column('key_hash').execute();
    await index(db, 'api_keys', ['tenant_id', 'created_at']);
  },
});

/** Every table that holds one tenant's records. `tenants` and `api_keys` are global (reference) tables. */
export const TENANT_TABLES = [
  'environments', 'integrations', 'asset_groups', 'asset_group_members', 'exemptions', 'assets', 'vulnerabilities',
  'vulnerability_packages', 'vulnerability_exemptions', 'risks',
] as const;

/**
 * PostgreSQL only: row-level security as a second wall behind the tenant predicate every query carries. Each tenant
 * table is visible to the API role only for the tenant named by the transaction-local setting `secinv.tenant_id`; the
 * user that ran the migrations (import, keys) keeps full access; FORCE applies the policies to the table owner too.
 * The API role has no BYPASSRLS, owns nothing, and may only read (and stamp api_keys.last_used_at).
 */
const rowLevelSecurity = (dialect: Dialect): Migration => ({
  async up(db) {
    if (dialect !== 'postgres') return;
    // Roles are cluster-wide and several databases may migrate at once: tolerate a concurrent creation. The role logs
    // in itself (no password is set here: trust/cert auth, or `alter role secinv_api password …`, see docs/SCALING.md),
    // so no statement on its connections can switch to a more privileged role.
    await sql.raw(`do $$ begin
      create role ${API_ROLE} login nosuperuser nobypassrls nocreatedb nocreaterole;
    exception when duplicate_object or unique_violation then
      -- An existing role keeps (or gets back) exactly these attributes, when the migrating user may set them.
      begin alter role ${API_ROLE} login nosuperuser nobypassrls; exception when insufficient_privilege then null; end;
    end $$`).execute(db);
    await sql.raw(`do $$ begin execute format('grant usage on schema %I to ${API_ROLE}', current_schema()); end $$`).execute(db);
    await sql.raw(`grant select on tenants, ${TENANT_TABLES.join(', ')} to ${API_ROLE}`).execute(db);
    await sql.raw(`grant select, update (last_used_at) on api_keys to ${API_ROLE}`).execute(db);
    for (const name of TENANT_TABLES) {
      await sql.raw(`alter table ${name} enable row level security`).execute(db);
      await sql.raw(`alter table ${name} force row level security`).execute(db);
      await sql.raw(`create policy tenant_isolation on ${name} to ${API_ROLE} using (tenant_id = current_setting('secinv.tenant_id', true))`).execute(db);
      await sql.raw(`create policy owner_access on ${name} to current_user using (true) with check (true)`).execute(db);
    }
  },
});

/**
 * Risk lookups by their selective filters, and the server's secrets: a random key, made once per database, that
 * signs list cursors. Every `serve` process of one database reads the same key, so a cursor issued by one process is
 * accepted by all.
 */
const riskIndexesAndSecrets = (dialect: Dialect): Migration => ({
  async up(db) {
    for (const column of ['primary_asset_id', 'risk_type_id', 'integration_id']) await index(db, 'risks', ['tenant_id', column, 'id']);
    await db.schema.createTable('server_secrets').ifNotExists()
      .addColumn('name', sql.raw(columnType(dialect, 'text')), (c) => c.primaryKey())
      .addColumn('value', 'text', (c) => c.notNull())
      .execute();
    await db.insertInto('server_secrets' as never).values({ name: 'cursor_key', value: randomBytes(32).toString('hex') } as never)
      .onConflict((oc) => oc.doNothing()).execute();
    if (dialect === 'postgres') await sql.raw(`grant select on server_secrets to ${API_ROLE}`).execute(db);
  },
});

/**
 * The vulnerability list: one index per sort key, after is_exempted (which every query filters on, false by default)
 * and ending in the (asset_id, vulnerability_id) tie-break; lookups by vulnerability id and package target name.
 */
const vulnerabilityIndexes = (): Migration => ({
  async up(db) {
    for (const column of ['severity_level_value', 'has_kev', 'has_exploit', 'first_observed_at', 'last_observed_at']) {
      await index(db, 'vulnerabilities', ['tenant_id', 'is_exempted', column, 'asset_id', 'vulnerability_id'], `vulnerabilities_${column}_idx`);
    }
    await index(db, 'vulnerabilities', ['tenant_id', 'vulnerability_id', 'asset_id']);
    await index(db, 'vulnerability_packages', ['tenant_id', 'target_name']);
  },
});

export const migrations = (dialect: Dialect): MigrationProvider => ({
  getMigrations: async () => ({
    '0001_initial': initial(dialect),
    '0002_row_level_security': rowLevelSecurity(dialect),
    '0003_risk_indexes_and_secrets': riskIndexesAndSecrets(dialect),
    '0004_vulnerability_indexes': vulnerabilityIndexes(),
  }),
});
