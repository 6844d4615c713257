// PostgreSQL's own tenant wall: row-level security on every tenant table, for the role the API runs as.
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TENANT_TABLES } from '../../../src/storage/db/tables.js';
import { connect } from '../../../src/storage/db/connect.js';
import { defaultConnectOptions } from '../../../src/storage/db/connection.js';
import { fromTenant } from '../../../src/storage/tx/tenant.js';
import { tenantReader } from '../../../src/storage/tx/read.js';
import { openStorage, type Storage } from '../../../src/storage/index.js';
import type { Database } from '../../../src/storage/db/tables.js';
import { A1, fixture } from '../../fixtures.js';
import { adminQuery } from '../../postgres-admin.js';
import {
  createTestDatabase,
  importRecords,
  rawTenantAccess,
  TENANT_A,
  TENANT_B,
  TEST_DIALECTS,
} from '../../helpers.js';

describe.skipIf(!TEST_DIALECTS.includes('postgres'))('row-level security (PostgreSQL)', () => {
  let url: string;
  let drop: () => Promise<void>;
  let admin: Storage;
  let api: Storage;
  let raw: Awaited<ReturnType<typeof rawTenantAccess>>;

  beforeAll(async () => {
    ({ url, drop } = await createTestDatabase('postgres'));
    admin = await openStorage(url);
    expect((await importRecords(admin, fixture)).problems).toEqual([]);
    api = await openStorage(url, { role: 'api' });
    raw = await rawTenantAccess(url, 'api');
  });
  afterAll(async () => {
    await raw.close();
    await api.close();
    await admin.close();
    await drop();
  });

  const asOwner = (text: string) => adminQuery(text, url);

  /** Reads a whole tenant table through the API role with the tenant predicate deliberately left out. */
  const unfiltered = (tenantId: string, table: (typeof TENANT_TABLES)[number]) =>
    raw.withTenant(tenantId, (db: Kysely<Database>) =>
      sql<{ tenant_id: string }>`select tenant_id from ${sql.table(table)}`.execute(db).then((r) => r.rows),
    );

  /** The isolation property: every row visible without a predicate is the tenant's, and all of them are. */
  async function seesExactlyItsOwnAssets(tenantId: string, expected: number): Promise<boolean> {
    const rows = await unfiltered(tenantId, 'assets');
    return rows.length === expected && rows.every((r) => r.tenant_id === tenantId);
  }

  it("a query without the tenant predicate returns only the current tenant's rows, on every tenant table", async () => {
    expect(await seesExactlyItsOwnAssets(TENANT_B, 2)).toBe(true);
    expect(await seesExactlyItsOwnAssets(TENANT_A, 6)).toBe(true);
    for (const table of TENANT_TABLES) {
      const rows = await unfiltered(TENANT_B, table);
      expect(
        rows.filter((r) => r.tenant_id !== TENANT_B),
        table,
      ).toEqual([]);
    }
    expect((await unfiltered(TENANT_A, 'vulnerabilities')).length).toBe(8);
    expect((await unfiltered(TENANT_B, 'vulnerabilities')).length).toBe(1);
  });

  it('no tenant set means no rows', async () => {
    expect(await unfiltered('', 'assets')).toEqual([]);
  });

  it('the API role can neither write tenant data nor bypass the policies', async () => {
    await expect(raw.withTenant(TENANT_B, (db) => db.deleteFrom('assets').execute())).rejects.toThrow(
      /permission denied/,
    );
    const role = await raw.withTenant(TENANT_B, (db) =>
      sql<{ rolsuper: boolean; rolbypassrls: boolean; owns: number }>`select rolsuper, rolbypassrls,
        (select count(*)::int from pg_class where relowner = pg_roles.oid) as owns
        from pg_roles where rolname = current_user`
        .execute(db)
        .then((r) => r.rows[0]),
    );
    expect(role).toEqual({ rolsuper: false, rolbypassrls: false, owns: 0 });
    await expect(raw.withTenant(TENANT_B, (db) => sql`set role postgres`.execute(db))).rejects.toThrow(
      /permission denied/,
    );
  });

  it('the API still answers through the policies (key lookup, last use, reads)', async () => {
    const scope = { tenantId: TENANT_B, dataVersion: 1 };
    const asset = JSON.parse((await api.getAsset(scope, A1, false))!.toString());
    expect([asset.tenantId, asset.name]).toEqual([TENANT_B, 'tenant-b-web']);
  });

  it('the tenant id reaches the setting exactly, quotes and backslashes included', async () => {
    const setting = (tenantId: string) =>
      raw.withTenant(tenantId, (db) =>
        sql<{ v: string }>`select current_setting('secinv.tenant_id') as v`.execute(db).then((r) => r.rows[0]!.v),
      );
    for (const odd of ["o'brien", 'back\\slash', "x'); drop table assets; --", '$1 ;'])
      expect(await setting(odd)).toBe(odd);
    expect(await seesExactlyItsOwnAssets(TENANT_B, 2)).toBe(true);
  });

  it('a read that fails leaves its connection out of its transaction', async () => {
    const single = await connect(url, { ...defaultConnectOptions, role: 'api', poolMax: 1 });
    try {
      const read = tenantReader(single.db, single.dialect);
      await expect(read(TENANT_B, (db) => sql`select * from no_such_table`.execute(db))).rejects.toThrow(
        /no_such_table/,
      );
      // The one connection of the pool: a transaction left open would still hold the tenant's local setting.
      const after = await sql<{ v: string | null }>`select current_setting('secinv.tenant_id', true) as v`.execute(
        single.db,
      );
      expect(after.rows[0]!.v ?? '').toBe('');
      expect(await read(TENANT_A, (db) => fromTenant(db, 'assets', TENANT_A).select('id').execute())).toHaveLength(6);
    } finally {
      await single.db.destroy();
    }
  });

  it('the same check fails once the wall is removed', async () => {
    // Without its policy the table denies the API role everything: the tenant no longer sees its own rows.
    await asOwner('drop policy tenant_isolation on assets');
    expect(await seesExactlyItsOwnAssets(TENANT_B, 2)).toBe(false);
    // Without row-level security the predicate-less query leaks the other tenant's rows.
    await asOwner('alter table assets disable row level security');
    expect(await seesExactlyItsOwnAssets(TENANT_B, 2)).toBe(false);
    expect(new Set((await unfiltered(TENANT_B, 'assets')).map((r) => r.tenant_id))).toEqual(
      new Set([TENANT_A, TENANT_B]),
    );
  });
});
