// Migrations are frozen in time: migrating an empty database one step at a time gives exactly the schema of the
// committed snapshot (taken from the schema the released versions built), on both databases, and migrating again
// changes nothing. To regenerate the snapshot after adding a migration, run this file with
// SECINV_WRITE_SCHEMA_SNAPSHOT=1 and review the diff of test/storage/db/migrations/schema-snapshot.json.
import { readFileSync, writeFileSync } from 'node:fs';
import { Kysely, Migrator, PostgresDialect, sql, SqliteDialect } from 'kysely';
import Sqlite from 'better-sqlite3';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { migrations } from '../../../../src/storage/db/migrations/index.js';
import { openStorage } from '../../../../src/storage/index.js';
import { createTestDatabase, TEST_DIALECTS, type TestDialect } from '../../../helpers.js';
import { introspectSchema, type Schema } from '../../introspect.js';

const SNAPSHOT = new URL('./schema-snapshot.json', import.meta.url);
const snapshot = JSON.parse(readFileSync(SNAPSHOT, 'utf8')) as Record<TestDialect, Schema>;
const written: Partial<Record<TestDialect, Schema>> = {};

const kysely = (dialect: TestDialect, url: string): Kysely<unknown> =>
  dialect === 'sqlite'
    ? new Kysely({ dialect: new SqliteDialect({ database: new Sqlite(url.slice('sqlite:'.length)) }) })
    : new Kysely({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 1 }) }) });

/**
 * A step of the Migrator, run again when PostgreSQL fails it for another database of the cluster altering the shared
 * API role at the same moment (other test files create databases meanwhile); the storage retries the same way
 * (src/storage/db/connect.ts). The step rolled back whole, so running it again is what the storage does too.
 */
async function step<R extends { error?: unknown }>(run: () => Promise<R>): Promise<R> {
  for (let attempt = 1; ; attempt += 1) {
    const result = await run();
    if (attempt >= 12 || !/tuple concurrently updated/.test(String(result.error))) return result;
    await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(2000, 100 * 2 ** attempt)));
  }
}

for (const dialect of TEST_DIALECTS) {
  describe(`migrations on ${dialect}`, () => {
    it('step by step from an empty database, they build the schema of the snapshot; again, they change nothing', async () => {
      const database = await createTestDatabase(dialect);
      const db = kysely(dialect, database.url);
      try {
        const migrator = new Migrator({ db, provider: migrations(dialect) });
        const names = Object.keys(await migrations(dialect).getMigrations());
        expect(names).toEqual([...names].sort());
        for (const name of names) {
          const { error, results } = await step(() => migrator.migrateUp());
          expect(error).toBeUndefined();
          expect(results?.map((r) => [r.migrationName, r.status])).toEqual([[name, 'Success']]);
        }
        const schema = await introspectSchema(dialect, database.url);
        if (process.env.SECINV_WRITE_SCHEMA_SNAPSHOT === '1') written[dialect] = schema;
        else expect(schema).toEqual(snapshot[dialect]);

        const again = await step(() => migrator.migrateToLatest());
        expect([again.error, again.results]).toEqual([undefined, []]);
        expect(await introspectSchema(dialect, database.url)).toEqual(schema);
      } finally {
        await db.destroy();
        await database.drop();
      }
    });
  });
}

for (const dialect of TEST_DIALECTS) {
  describe(`0009_asset_documents on ${dialect}`, () => {
    it('moves each stored asset’s document, raw data and search text to asset_documents, served as before', async () => {
      const database = await createTestDatabase(dialect);
      const db = kysely(dialect, database.url);
      const doc = { id: 'asset-1', name: 'web', provider: 'AWS', riskScore: 3 };
      try {
        const migrator = new Migrator({ db, provider: migrations(dialect) });
        expect((await step(() => migrator.migrateTo('0008_checks_and_derived_risks'))).error).toBeUndefined();
        const blob =
          dialect === 'sqlite' ? sql`${Buffer.from(JSON.stringify(doc))}` : sql`${JSON.stringify(doc)}::bytea`;
        await sql`insert into tenants (tenant_id, organization_id, data_version) values ('t1', 'o1', 1)`.execute(db);
        await sql`insert into assets (tenant_id, id, provider, name, name_lc, first_observed_at, last_observed_at,
          risk_score, is_publicly_exposed, has_admin_privileges, has_overly_permissive_privileges,
          is_susceptible_to_privilege_escalation, n_low_secrets, n_medium_secrets, n_high_secrets, n_critical_secrets,
          n_low, n_medium, n_high, n_critical, vulnerability_score, is_vulnerable, has_kev, has_exploit, is_exploitable,
          tags, meta_search, doc, raw_data)
          values ('t1', 'asset-1', 'AWS', 'web', 'web', '2024-01-01T00:00:00.000Z', '2024-01-02T00:00:00.000Z', 3,
          0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0.5, 1, 0, 0, 0, '[]', ${'staterunning'}, ${blob}, ${'{"state":"running"}'})`.execute(
          db,
        );
        expect((await step(() => migrator.migrateToLatest())).error).toBeUndefined();
      } finally {
        await db.destroy();
      }
      const storage = await openStorage(database.url);
      try {
        const scope = { tenantId: 't1', dataVersion: 1 };
        const asset = await storage.getAsset(scope, 'asset-1', true);
        expect(JSON.parse(asset!.toString('utf8'))).toMatchObject({
          ...doc,
          numberOfLowVulnerabilities: 1,
          vulnerabilityScore: 0.5,
          rawData: { state: 'running' },
        });
        const page = (metadata: string) => storage.listAssets(scope, { metadata, page: 1, perPage: 10 });
        expect((await page('runn')).total).toBe(1);
        expect((await page('stopped')).total).toBe(0);
      } finally {
        await storage.close();
        await database.drop();
      }
    });
  });
}

for (const dialect of TEST_DIALECTS) {
  describe(`0010_finding_documents on ${dialect}`, () => {
    it('moves each finding’s document apart and its intel to the narrow row, then keys it by the finding’s id (0011), served as before', async () => {
      const database = await createTestDatabase(dialect);
      const db = kysely(dialect, database.url);
      // 1,203 findings: more than one batch of the step; every 7th carries intel, one of them an escaped title.
      const docs = Array.from({ length: 1203 }, (_, i) => {
        const id = `CVE-2024-${String(i).padStart(5, '0')}`;
        const intel = i % 7 === 0;
        return {
          vulnerabilityId: id,
          assetId: `asset-${i % 3}`,
          title: i === 14 ? 'quotes " and \\ backslash\n' : `finding ${i}`,
          hasKev: intel,
          hasExploit: intel && i % 2 === 0,
          knownExploit: intel
            ? {
                cveID: id,
                dateAdded: '2024-01-01',
                requiredAction: 'patch',
                ...(i === 0 ? { dueDate: '2024-01-20' } : {}),
              }
            : null,
          exploits: intel && i % 2 === 0 ? [{ source: 'exploitdb', id: String(i), title: 'x' }] : [],
          severityLevel: 'HIGH',
        };
      });
      try {
        const migrator = new Migrator({ db, provider: migrations(dialect) });
        expect((await step(() => migrator.migrateTo('0009_asset_documents'))).error).toBeUndefined();
        await sql`insert into tenants (tenant_id, organization_id, data_version) values ('t1', 'o1', 1)`.execute(db);
        for (let i = 0; i < docs.length; i += 100) {
          const rows = docs.slice(i, i + 100).map((d) => {
            const bytes = JSON.stringify(d);
            const blob = dialect === 'sqlite' ? sql`${Buffer.from(bytes)}` : sql`convert_to(${bytes}, 'UTF8')`;
            return sql`('t1', ${d.assetId}, ${d.vulnerabilityId}, 3, ${d.hasKev ? 1 : 0}, ${d.hasExploit ? 1 : 0}, 0, 0,
              0, '2024-01-01T00:00:00.000Z', '2024-01-02T00:00:00.000Z', ${blob})`;
          });
          await sql`insert into vulnerabilities (tenant_id, asset_id, vulnerability_id, severity_level_value, has_kev,
            has_exploit, is_exploitable, has_vendor_fix, is_exempted, first_observed_at, last_observed_at, doc)
            values ${sql.join(rows)}`.execute(db);
        }
        expect((await step(() => migrator.migrateTo('0010_finding_documents'))).error).toBeUndefined();
        const stored = await sql<{ n: number | string }>`select count(*) as n from vulnerability_documents`.execute(db);
        expect(Number(stored.rows[0]!.n)).toBe(docs.length);
        const withIntel = await sql<{ n: number | string }>`select count(*) as n from vulnerabilities
          where intel is not null`.execute(db);
        expect(Number(withIntel.rows[0]!.n)).toBe(docs.filter((d) => d.hasKev).length);
        const first = await sql<{ doc: Uint8Array }>`select doc from vulnerability_documents
          where vulnerability_id = 'CVE-2024-00000'`.execute(db);
        const kept = JSON.parse(Buffer.from(first.rows[0]!.doc).toString('utf8')) as Record<string, unknown>;
        expect(Object.keys(kept)).toEqual(['vulnerabilityId', 'assetId', 'title', 'severityLevel']);

        // 0011_finding_ids: every finding gets an id of its own, and its document moves to that key unchanged.
        expect((await step(() => migrator.migrateTo('0011_finding_ids'))).error).toBeUndefined();
        const joined = await sql<{ n: number | string; ids: number | string }>`select count(*) as n,
          count(distinct v.id) as ids from vulnerabilities as v join vulnerability_documents as d
          on d.tenant_id = v.tenant_id and d.finding_id = v.id`.execute(db);
        expect([Number(joined.rows[0]!.n), Number(joined.rows[0]!.ids)]).toEqual([docs.length, docs.length]);
        const moved = await sql<{ doc: Uint8Array }>`select d.doc from vulnerabilities as v
          join vulnerability_documents as d on d.tenant_id = v.tenant_id and d.finding_id = v.id
          where v.vulnerability_id = 'CVE-2024-00000'`.execute(db);
        expect(Buffer.from(moved.rows[0]!.doc).equals(Buffer.from(first.rows[0]!.doc))).toBe(true);
      } finally {
        await db.destroy();
      }
      const storage = await openStorage(database.url);
      try {
        const scope = { tenantId: 't1', dataVersion: 1 };
        const served = new Map<string, unknown>();
        let after: Parameters<typeof storage.listVulnerabilities>[2];
        for (;;) {
          const { items, next } = await storage.listVulnerabilities(
            scope,
            {
              sortBy: 'lastObservedAt',
              sortOrder: 'ASC',
              page: 1,
              perPage: 500,
              isExempted: false,
              includeTotal: false,
            },
            after,
          );
          for (const item of items) {
            const v = JSON.parse(item.toString('utf8')) as { vulnerabilityId: string };
            served.set(v.vulnerabilityId, v);
          }
          if (next === null) break;
          after = next;
        }
        expect(served.size).toBe(docs.length);
        // Each MEDIUM finding, first observed on 2024-01-01, due 90 days later by the default SLA (0022), or by the end
        // of its KEV entry's earlier due date.
        const dueAt = (d: (typeof docs)[number]) =>
          d.knownExploit?.dueDate === undefined
            ? '2024-03-31T00:00:00.000Z'
            : `${d.knownExploit.dueDate}T23:59:59.999Z`;
        expect(dueAt(docs[0]!)).toBe('2024-01-20T23:59:59.999Z');
        for (const d of docs)
          expect(served.get(d.vulnerabilityId)).toEqual({ ...d, exemptions: [], dueAt: dueAt(d), isOverdue: true });
      } finally {
        await storage.close();
        await database.drop();
      }
    });
  });
}

for (const dialect of TEST_DIALECTS) {
  describe(`0012_deferrable_keys on ${dialect}`, () => {
    it('keeps every package and alias, now keyed by a unique index that still refuses a duplicate', async () => {
      const database = await createTestDatabase(dialect);
      const db = kysely(dialect, database.url);
      try {
        const migrator = new Migrator({ db, provider: migrations(dialect) });
        expect((await step(() => migrator.migrateTo('0011_finding_ids'))).error).toBeUndefined();
        const packages = Array.from({ length: 250 }, (_, i) => [
          't1',
          `asset-${i % 4}`,
          `CVE-2024-${String(Math.floor(i / 2)).padStart(4, '0')}`,
          i % 2,
          `pkg-${i}`,
          i % 3 === 0 ? null : `target-${i % 5}`,
          'library',
          'lang-pkgs',
          i % 7 === 0 ? `pkg:npm/pkg-${i}@1.0.0` : null,
        ]);
        const aliases = packages
          .filter((_, i) => i % 2 === 0)
          .map(([tenant, asset, id], i) => [tenant, asset, id, `GHSA-${String(i).padStart(4, '0')}`]);
        const row = (values: unknown[]) => sql`(${sql.join(values.map((v) => sql`${v}`))})`;
        await sql`insert into vulnerability_packages (tenant_id, asset_id, vulnerability_id, position, package_name,
          target_name, target_type, target_class, purl) values ${sql.join(packages.map(row))}`.execute(db);
        await sql`insert into vulnerability_aliases (tenant_id, asset_id, vulnerability_id, alias)
          values ${sql.join(aliases.map(row))}`.execute(db);
        expect((await step(() => migrator.migrateTo('0012_deferrable_keys'))).error).toBeUndefined();

        const keptPackages = await sql<Record<string, unknown>>`select tenant_id, asset_id, vulnerability_id, position,
          package_name, target_name, target_type, target_class, purl from vulnerability_packages
          order by package_name`.execute(db);
        const byName = (rows: unknown[][]) => [...rows].sort((a, b) => String(a[4]).localeCompare(String(b[4])));
        expect(keptPackages.rows.map((r) => Object.values(r))).toEqual(byName(packages));
        const keptAliases = await sql<Record<string, unknown>>`select tenant_id, asset_id, vulnerability_id, alias
          from vulnerability_aliases order by alias`.execute(db);
        expect(keptAliases.rows.map((r) => Object.values(r))).toEqual(aliases);
        // The key is still a key: the same package position, or the same alias, a second time is refused.
        const [first] = packages;
        await expect(
          sql`insert into vulnerability_packages (tenant_id, asset_id, vulnerability_id, position)
            values (${first![0]}, ${first![1]}, ${first![2]}, ${first![3]})`.execute(db),
        ).rejects.toThrow(/unique/i);
        const [alias] = aliases;
        await expect(
          sql`insert into vulnerability_aliases (tenant_id, asset_id, vulnerability_id, alias)
            values (${alias![0]}, ${alias![1]}, ${alias![2]}, ${alias![3]})`.execute(db),
        ).rejects.toThrow(/unique/i);
      } finally {
        await db.destroy();
        await database.drop();
      }
    });
  });

  describe(`0019_scans_and_key_scopes on ${dialect}`, () => {
    it('leaves every existing key its meaning: read', async () => {
      const database = await createTestDatabase(dialect);
      const db = kysely(dialect, database.url);
      try {
        const migrator = new Migrator({ db, provider: migrations(dialect) });
        expect((await step(() => migrator.migrateTo('0018_feed_load_room'))).error).toBeUndefined();
        await sql`insert into api_keys (id, tenant_id, name, prefix, key_hash, created_at)
          values ('key_old', 't1', null, 'secinv_abcdef', 'hash', '2026-01-01T00:00:00.000Z')`.execute(db);
        expect((await step(() => migrator.migrateTo('0019_scans_and_key_scopes'))).error).toBeUndefined();
        const { rows } = await sql<{ scopes: string }>`select scopes from api_keys where id = 'key_old'`.execute(db);
        expect(rows).toEqual([{ scopes: 'read' }]);
      } finally {
        await db.destroy();
        await database.drop();
      }
    });
  });
}

if (process.env.SECINV_WRITE_SCHEMA_SNAPSHOT === '1') {
  describe('snapshot', () => {
    it('is written', () => {
      expect(Object.keys(written).sort()).toEqual(['postgres', 'sqlite']);
      writeFileSync(SNAPSHOT, `${JSON.stringify(written, null, 2)}\n`);
    });
  });
}
