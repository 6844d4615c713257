// Scale-out readiness: every primary key, unique constraint and index of a tenant table leads with tenant_id, and
// every table is either a declared tenant table or one of the declared global tables.
import Sqlite from 'better-sqlite3';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { TENANT_TABLES } from '../../../src/storage/db/tables.js';
import { openStorage } from '../../../src/storage/index.js';
import { createTestDatabase, TEST_DIALECTS, type TestDialect } from '../../helpers.js';

const GLOBAL_TABLES = [
  'api_keys',
  'tenants',
  'server_secrets',
  'feeds',
  'feed_kev',
  'feed_exploits',
  'feed_epss',
  'scan_queue',
  'webhooks',
  'kysely_migration',
  'kysely_migration_lock',
];

interface IndexInfo {
  table: string;
  index: string;
  firstColumn: string | null;
}

async function introspect(dialect: TestDialect, url: string): Promise<{ tables: string[]; indexes: IndexInfo[] }> {
  if (dialect === 'sqlite') {
    const db = new Sqlite(url.slice('sqlite:'.length), { readonly: true });
    try {
      const tables = (
        db.prepare("select name from sqlite_master where type = 'table' and name not like 'sqlite_%'").all() as {
          name: string;
        }[]
      ).map((t) => t.name);
      const indexes = tables.flatMap((table) =>
        (db.pragma(`index_list('${table}')`) as { name: string }[]).map((ix) => {
          const first = (db.pragma(`index_xinfo('${ix.name}')`) as { seqno: number; name: string | null }[]).find(
            (c) => c.seqno === 0,
          );
          return { table, index: ix.name, firstColumn: first?.name ?? null };
        }),
      );
      return { tables, indexes };
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const tables = (
      await client.query<{ name: string }>(
        'select tablename as name from pg_tables where schemaname = current_schema()',
      )
    ).rows.map((r) => r.name);
    const indexes = (
      await client.query<IndexInfo>(`
      select t.relname as "table", i.relname as "index", a.attname as "firstColumn"
      from pg_index x
      join pg_class t on t.oid = x.indrelid
      join pg_class i on i.oid = x.indexrelid
      join pg_namespace n on n.oid = t.relnamespace
      left join pg_attribute a on a.attrelid = t.oid and a.attnum = x.indkey[0]
      where n.nspname = current_schema()`)
    ).rows;
    return { tables, indexes };
  } finally {
    await client.end();
  }
}

for (const dialect of TEST_DIALECTS) {
  describe(`schema on ${dialect}`, () => {
    it('every index of a tenant table (primary keys and unique constraints included) leads with tenant_id', async () => {
      const database = await createTestDatabase(dialect);
      try {
        await (await openStorage(database.url)).close();
        const { tables, indexes } = await introspect(dialect, database.url);
        expect([...tables].sort()).toEqual([...TENANT_TABLES, ...GLOBAL_TABLES].sort());
        const tenantIndexes = indexes.filter((ix) => (TENANT_TABLES as readonly string[]).includes(ix.table));
        // Every tenant table has its primary key plus, for the large ones, its sort and lookup indexes. On SQLite the
        // finding documents are keyed by the finding's integer id alone, their table's rowid: no index, and reached
        // only through a finding row of the tenant (docs/DESIGN.md §45).
        const rowidKeyed: readonly string[] = dialect === 'sqlite' ? ['vulnerability_documents'] : [];
        expect(new Set(tenantIndexes.map((ix) => ix.table))).toEqual(
          new Set(TENANT_TABLES.filter((table) => !rowidKeyed.includes(table))),
        );
        expect(tenantIndexes.length).toBeGreaterThan(30);
        expect(tenantIndexes.filter((ix) => ix.firstColumn !== 'tenant_id')).toEqual([]);
      } finally {
        await database.drop();
      }
    });
  });
}
