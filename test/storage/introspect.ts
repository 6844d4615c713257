// The schema of a database as plain data, for comparing two databases or a database with a committed snapshot:
// every table, column, constraint, index, and on PostgreSQL the row-level security, policies and grants. Kysely's own
// migration bookkeeping tables and everything that differs between two runs (names of the database and the
// migrating user, object ids) are left out.
import { createHash } from 'node:crypto';
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
        await rows(`select c.relname as "table", c.relrowsecurity as "rowSecurity", c.relforcerowsecurity as "forceRowSecurity",
          c.reloptions as "options"
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

/**
 * Every row of every table (Kysely's bookkeeping left out) as one digest per table, for telling whether a database is
 * in exactly the state it was. Rows are ordered by all their columns, so the digest does not depend on storage order.
 * A change's commit time is left out: the same write made twice appends the same changes at other times.
 */
const columnsOf = (table: string): string =>
  table === 'changes'
    ? 'tenant_id, seq, null, type, asset_id, vulnerability_id, risk_id, scan_id, cause, before, after, record'
    : '*';

export async function contentDigest(dialect: TestDialect, url: string): Promise<Record<string, string>> {
  const digest = (rows: unknown[]) =>
    createHash('sha256')
      .update(JSON.stringify(rows, (_, v: unknown) => (typeof v === 'bigint' ? String(v) : v)))
      .digest('hex');
  const out: Record<string, string> = {};
  if (dialect === 'sqlite') {
    const db = new Sqlite(url.slice('sqlite:'.length), { readonly: true });
    try {
      const tables = db
        .prepare("select name from sqlite_master where type = 'table' and name not like 'sqlite_%'")
        .all();
      for (const { name } of tables as { name: string }[]) {
        if (BOOKKEEPING.test(name)) continue;
        const count = db.prepare(`pragma table_info("${name}")`).all().length;
        const order = Array.from({ length: count }, (_, i) => i + 1).join(', ');
        out[name] = digest(
          db
            .prepare(`select ${columnsOf(name)} from "${name}" order by ${order}`)
            .raw()
            .all(),
        );
      }
    } finally {
      db.close();
    }
    return out;
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const tables = await client.query<{ name: string; columns: number }>(`select c.relname as name,
      (select count(*)::int from pg_attribute a where a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped) as columns
      from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = current_schema() and c.relkind = 'r'`);
    for (const { name, columns } of tables.rows) {
      if (BOOKKEEPING.test(name)) continue;
      const order = Array.from({ length: columns }, (_, i) => i + 1).join(', ');
      out[name] = digest(
        (await client.query({ text: `select ${columnsOf(name)} from "${name}" order by ${order}`, rowMode: 'array' }))
          .rows,
      );
    }
  } finally {
    await client.end();
  }
  return out;
}
