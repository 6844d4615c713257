// The schema of a database as plain data, for comparing two databases or a database with a committed snapshot:
// every table, column, constraint, index, and on PostgreSQL the row-level security, policies and grants. Kysely's own
// migration bookkeeping tables and everything that differs between two runs (names of the database and the
// migrating user, object ids) are left out.
import Sqlite from 'better-sqlite3';
import pg from 'pg';
import type { TestDialect } from '../helpers.js';

export type Schema = Record<string, unknown>;

const BOOKKEEPING = /^kysely_migration/;

export async function introspectSchema(dialect: TestDialect, url: string): Promise<Schema> {
  return dialect === 'sqlite' ? introspectSqlite(url.slice('sqlite:'.length)) : introspectPostgres(url);
}

function introspectSqlite(path: string): Schema {
  const db = new Sqlite(path, { readonly: true });
  try {
    const objects = db
      .prepare(
        'select type, name, tbl_name as "table", sql from sqlite_master where name not like \'sqlite_%\' order by type, name',
      )
      .all() as { type: string; name: string; table: string; sql: string | null }[];
    return { objects: objects.filter((o) => !BOOKKEEPING.test(o.table)) };
  } finally {
    db.close();
  }
}

async function introspectPostgres(url: string): Promise<Schema> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const rows = async (text: string) =>
    (await client.query(text)).rows.filter((r: { table?: string }) => !BOOKKEEPING.test(r.table ?? ''));
  try {
    const user = (await client.query<{ user: string }>('select current_user as "user"')).rows[0]?.user ?? '';
    const anonymise = (value: unknown) =>
      JSON.parse(
        JSON.stringify(value)
          .replaceAll(`"${user}"`, '"<migrating user>"')
          .replaceAll(`{${user}}`, '{<migrating user>}'),
      ) as unknown;
    return anonymise({
      tables:
        await rows(`select c.relname as "table", c.relrowsecurity as "rowSecurity", c.relforcerowsecurity as "forceRowSecurity"
        from pg_class c join pg_namespace n on n.oid = c.relnamespace
        where n.nspname = current_schema() and c.relkind = 'r' order by 1`),
      columns:
        await rows(`select table_name as "table", column_name as "column", data_type as type, is_nullable as nullable,
          column_default as "default", collation_name as collation, ordinal_position as position
        from information_schema.columns where table_schema = current_schema() order by 1, ordinal_position`),
      constraints: await rows(`select t.relname as "table", c.conname as name, pg_get_constraintdef(c.oid) as definition
        from pg_constraint c join pg_class t on t.oid = c.conrelid join pg_namespace n on n.oid = t.relnamespace
        where n.nspname = current_schema() order by 1, 2`),
      indexes: await rows(`select tablename as "table", indexname as name, indexdef as definition
        from pg_indexes where schemaname = current_schema() order by 1, 2`),
      policies:
        await rows(`select tablename as "table", policyname as name, roles::text as roles, cmd, qual, with_check as "withCheck"
        from pg_policies where schemaname = current_schema() order by 1, 2`),
      grants: await rows(`select table_name as "table", grantee, privilege_type as privilege
        from information_schema.role_table_grants where table_schema = current_schema() and grantee = 'secinv_api' order by 1, 3`),
      columnGrants:
        await rows(`select table_name as "table", column_name as "column", grantee, privilege_type as privilege
        from information_schema.column_privileges where table_schema = current_schema() and grantee = 'secinv_api'
          and privilege_type <> 'SELECT' order by 1, 2, 4`),
      role: (
        await client.query(`select rolcanlogin as login, rolsuper as super, rolbypassrls as "bypassRls", rolcreatedb as "createDb",
        rolcreaterole as "createRole" from pg_roles where rolname = 'secinv_api'`)
      ).rows,
    }) as Schema;
  } finally {
    await client.end();
  }
}
