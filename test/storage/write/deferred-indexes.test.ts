// A first import builds the secondary indexes of the tables it fills once, at its end (src/storage/write/deferred-indexes.ts):
// whatever happens to the run, the database keeps every index, and the data is what an import with the indexes in
// place would have written.
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { deferIndexes, emptyBulkTables } from '../../../src/storage/write/deferred-indexes.js';
import { connect } from '../../../src/storage/db/connect.js';
import type { Database } from '../../../src/storage/db/tables.js';
import { fixture } from '../../fixtures.js';
import { createTestDatabase, importRecords, openTestStorage, TENANT_A, TEST_DIALECTS } from '../../helpers.js';
import { adminQuery } from '../../postgres-admin.js';
import { introspectSchema } from '../introspect.js';

for (const dialect of TEST_DIALECTS) {
  describe(`bulk indexes on ${dialect}`, () => {
    it('a first import, a dry run and a failed import all leave the schema as the migrations built it', async () => {
      const opened = await openTestStorage(dialect);
      // More findings than one batch of the writer holds (800): a smaller write keeps its indexes.
      const large = [
        ...fixture,
        ...Array.from({ length: 900 }, (_, i): (typeof fixture)[number] => [
          'vulnerability',
          {
            tenantId: TENANT_A,
            assetId: 'sirn:assets:u1:aws:ec2:instance:us-east-1:i-001',
            vulnerabilityId: `CVE-2023-${String(i).padStart(5, '0')}`,
            severityLevel: 'HIGH',
            firstObservedAt: '2024-05-01T00:00:00Z',
            lastObservedAt: '2024-06-01T00:00:00Z',
          },
        ]),
      ];
      try {
        const before = await introspectSchema(dialect, opened.url);
        expect((await importRecords(opened.storage, large, true)).problems).toEqual([]);
        expect(await introspectSchema(dialect, opened.url)).toEqual(before);

        const broken = [...large, ['asset', { id: 'half-written' }] as (typeof fixture)[number]];
        expect((await importRecords(opened.storage, broken)).problemCount).toBeGreaterThan(0);
        expect(await introspectSchema(dialect, opened.url)).toEqual(before);
        const scope = { tenantId: TENANT_A, dataVersion: 0 };
        expect((await opened.storage.listAssets(scope, { page: 1, perPage: 10 })).total).toBe(0);

        expect((await importRecords(opened.storage, large)).problems).toEqual([]);
        expect(await introspectSchema(dialect, opened.url)).toEqual(before);
        // Again into tables that are no longer empty: the indexes are kept and maintained row by row.
        expect((await importRecords(opened.storage, fixture)).problems).toEqual([]);
        expect(await introspectSchema(dialect, opened.url)).toEqual(before);
        const kev = await opened.storage.listAssets({ tenantId: TENANT_A, dataVersion: 2 }, {
          page: 1,
          perPage: 100,
          hasKev: true,
          sortBy: 'vulnerabilityScore',
          sortOrder: 'DESC',
        } as never);
        expect(kev.total).toBeGreaterThan(0);
        expect(kev.items).toHaveLength(kev.total);
      } finally {
        await opened.dispose();
      }
    });
  });
}

for (const dialect of TEST_DIALECTS) {
  describe(`deferred keys on ${dialect}`, () => {
    /** The names of the tables' indexes, as the database lists them inside `q`. */
    const indexNames = async (q: Kysely<Database>) =>
      (dialect === 'sqlite'
        ? await sql<{ name: string }>`select name from sqlite_master where type = 'index' and sql is not null
            and tbl_name in ('vulnerability_packages', 'vulnerability_aliases') order by name`.execute(q)
        : await sql<{ name: string }>`select indexname as name from pg_indexes
            where tablename in ('vulnerability_packages', 'vulnerability_aliases') order by name`.execute(q)
      ).rows.map((r) => r.name);

    it('builds the unique keys of packages and aliases first when asked, then the rest, each once', async () => {
      const database = await createTestDatabase(dialect);
      const { db } = await connect(database.url);
      try {
        const all = await indexNames(db);
        expect(all).toContain('vulnerability_packages_key_idx');
        expect(all).toContain('vulnerability_aliases_key_idx');
        await db.transaction().execute(async (tx) => {
          const deferred = deferIndexes(tx, dialect, await emptyBulkTables(tx));
          expect(await indexNames(tx)).toEqual(all);
          await deferred.drop();
          expect(await indexNames(tx)).toEqual([]);
          await deferred.keys();
          expect(await indexNames(tx)).toEqual(['vulnerability_aliases_key_idx', 'vulnerability_packages_key_idx']);
          await deferred.keys();
          await deferred.rebuild();
          expect(await indexNames(tx)).toEqual(all);
        });
        expect(await indexNames(db)).toEqual(all);
      } finally {
        await db.destroy();
        await database.drop();
      }
    });

    it('a finding given twice in a first import, batches apart, keeps the packages of its last record', async () => {
      const opened = await openTestStorage(dialect);
      try {
        const before = await introspectSchema(dialect, opened.url);
        const record = (vulnerabilityId: string, packages: string[]): (typeof fixture)[number] => [
          'vulnerability',
          {
            tenantId: TENANT_A,
            assetId: 'sirn:assets:u1:aws:ec2:instance:us-east-1:i-001',
            vulnerabilityId,
            severityLevel: 'HIGH',
            firstObservedAt: '2024-05-01T00:00:00Z',
            lastObservedAt: '2024-06-01T00:00:00Z',
            packages: packages.map((packageName) => ({ packageName })),
          },
        ];
        const tenantAndAsset = fixture.filter(
          ([kind, r]) =>
            ['tenant', 'integration', 'environment'].includes(kind) ||
            (kind === 'asset' && r.id === 'sirn:assets:u1:aws:ec2:instance:us-east-1:i-001'),
        );
        // More findings between the two than one batch of the writer holds (800).
        const between = Array.from({ length: 900 }, (_, i) =>
          record(`CVE-2023-${String(i).padStart(5, '0')}`, ['zlib']),
        );
        const records = [
          ...tenantAndAsset,
          record('CVE-2024-0001', ['openssl', 'zlib']),
          ...between,
          record('CVE-2024-0001', ['curl']),
        ];
        expect((await importRecords(opened.storage, records)).problems).toEqual([]);
        expect(await introspectSchema(dialect, opened.url)).toEqual(before);
        const scope = { tenantId: TENANT_A, dataVersion: 1 };
        const named = async (packageName: string) =>
          (
            await opened.storage.listVulnerabilities(
              scope,
              {
                sortBy: 'lastObservedAt',
                sortOrder: 'ASC',
                page: 1,
                perPage: 2000,
                isExempted: false,
                includeTotal: true,
                packageName,
              } as never,
              undefined,
            )
          ).items.map((item) => (JSON.parse(item.toString('utf8')) as { vulnerabilityId: string }).vulnerabilityId);
        expect(await named('curl')).toEqual(['CVE-2024-0001']);
        expect(await named('openssl')).toEqual([]);
        expect(await named('zlib')).toHaveLength(900);
      } finally {
        await opened.dispose();
      }
    });
  });
}

if (TEST_DIALECTS.includes('postgres'))
  describe('bulk indexes on postgres, beside other sessions', () => {
    /** How many secondary indexes the findings table has inside a transaction that deferred them, then after. */
    const deferredIn = async (url: string) => {
      const { db } = await connect(url);
      const count = async (q: typeof db) =>
        Number(
          (
            await sql<{ n: string }>`select count(*) as n from pg_indexes
              where tablename = 'vulnerabilities' and indexname <> 'vulnerabilities_pkey'`.execute(q)
          ).rows[0]?.n,
        );
      try {
        const before = await count(db);
        let during = -1;
        await db.transaction().execute(async (tx) => {
          const deferred = deferIndexes(tx, 'postgres', await emptyBulkTables(tx));
          await deferred.drop();
          during = await count(tx);
          await deferred.rebuild();
          expect(await count(tx)).toBe(before);
        });
        return { before, during, after: await count(db) };
      } finally {
        await db.destroy();
      }
    };

    /** Waits until no client backend is connected to the database (asked from the administration database). */
    const noClientOf = async (url: string) => {
      const name = new URL(url).pathname.slice(1);
      for (let tries = 0; ; tries += 1) {
        const [row] = await adminQuery(
          `select count(*) as n from pg_stat_activity where datname = '${name}' and backend_type = 'client backend'`,
        );
        if (Number(row?.n) === 0) return;
        if (tries === 200) throw new Error(`sessions still connected to ${name}`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    };

    it('drops and rebuilds them when the import is alone, and keeps them while another session is connected', async () => {
      const database = await createTestDatabase('postgres');
      try {
        // Migrated, then closed: the next connection is the only one, once PostgreSQL has ended the closed one's
        // backend (which it does after the client has gone: under load it was still listed, and the drop was skipped).
        await (await connect(database.url)).db.destroy();
        await noClientOf(database.url);
        const alone = await deferredIn(database.url);
        // Severity, first and last seen, vulnerability id, due date: PostgreSQL has no flag indexes (docs/DESIGN.md §71).
        expect(alone.before).toBe(5);
        expect(alone).toEqual({ before: alone.before, during: 0, after: alone.before });

        const other = new pg.Client({ connectionString: database.url });
        await other.connect();
        try {
          expect(await deferredIn(database.url)).toEqual({
            before: alone.before,
            during: alone.before,
            after: alone.before,
          });
        } finally {
          await other.end();
        }
      } finally {
        await database.drop();
      }
    });
  });
