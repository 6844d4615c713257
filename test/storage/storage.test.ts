// The storage interface on every dialect: the same answers from SQLite and PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashKey, newKey } from '../../src/domain/keys.js';
import type { ListAssetsQuery } from '../../src/domain/assets.js';
import type { Storage } from '../../src/storage/index.js';
import { A1, A2, A3, A4, A5, A6, GROUP_1, fixture } from '../fixtures.js';
import {
  importRecords,
  openTestStorage,
  rawTenantAccess,
  TENANT_A,
  TENANT_B,
  TEST_DIALECTS,
  type TestStorage,
} from '../helpers.js';

const page = (extra: Partial<ListAssetsQuery> = {}): ListAssetsQuery => ({ page: 1, perPage: 100, ...extra });
const idsOf = (items: Buffer[]) => items.map((b) => (JSON.parse(b.toString()) as { id: string }).id);

for (const dialect of TEST_DIALECTS) {
  describe(`storage on ${dialect}`, () => {
    let opened: TestStorage;
    let storage: Storage;
    let raw: Awaited<ReturnType<typeof rawTenantAccess>>;
    beforeAll(async () => {
      opened = await openTestStorage(dialect);
      storage = opened.storage;
      raw = await rawTenantAccess(opened.url);
      expect((await importRecords(storage, fixture)).problems).toEqual([]);
    });
    afterAll(async () => {
      await raw.close();
      await opened.dispose();
    });

    const scopeA = () => ({ tenantId: TENANT_A, dataVersion: 1 });

    it("reads only the scoped tenant: the same id is each tenant's own record", async () => {
      const a = JSON.parse((await storage.getAsset(scopeA(), A1, true))!.toString());
      const b = JSON.parse((await storage.getAsset({ tenantId: TENANT_B, dataVersion: 1 }, A1, true))!.toString());
      expect([a.tenantId, a.name]).toEqual([TENANT_A, 'web-prod-1']);
      expect([b.tenantId, b.name, b.rawData]).toEqual([TENANT_B, 'tenant-b-web', { secret: 'only-b' }]);
      expect(await storage.getAsset({ tenantId: TENANT_B, dataVersion: 1 }, A2, false)).toBeUndefined();
      const listB = await storage.listAssets(
        { tenantId: TENANT_B, dataVersion: 1 },
        page({ assetGroupIds: [GROUP_1] }),
      );
      expect(listB).toMatchObject({ items: [], total: 0 });
    });

    it('sorts strings by code point and puts nulls last in both directions', async () => {
      expect(idsOf((await storage.listAssets(scopeA(), page({ sortBy: 'name' }))).items)).toEqual([
        A3,
        A6,
        A4,
        A2,
        A1,
        A5,
      ]);
      expect(idsOf((await storage.listAssets(scopeA(), page({ sortBy: 'name', sortOrder: 'DESC' }))).items)).toEqual([
        A1,
        A2,
        A4,
        A6,
        A3,
        A5,
      ]);
      expect(idsOf((await storage.listAssets(scopeA(), page({ sortBy: 'region', sortOrder: 'DESC' }))).items)).toEqual([
        A4,
        A3,
        A1,
        A5,
        A2,
        A6,
      ]);
    });

    it('answers filters identically', async () => {
      const cases: [Partial<ListAssetsQuery>, string[]][] = [
        [{ metadata: 'team' }, [A1, A5]],
        [{ query: 'WEB' }, [A1, A3]],
        [{ services: ['ec2', 'GCP::Storage'] }, [A1, A3, A5]],
        [{ environmentIds: ['production', 'non-production'] }, [A1, A2]],
        [{ severityLevels: ['HIGH'], isPubliclyExposed: true }, [A1, A4]],
        [{ executionIds: [1700000000001] }, [A1, A3]],
        [{ riskScoreGte: 5 }, [A1, A4, A6]],
        [
          { firstObservedAtStart: '2024-03-01T00:00:00.000Z', firstObservedAtEnd: '2024-05-01T00:00:00.000Z' },
          [A3, A4, A5],
        ],
      ];
      for (const [filters, expected] of cases) {
        const result = await storage.listAssets(scopeA(), page(filters));
        expect(idsOf(result.items), JSON.stringify(filters)).toEqual(expected);
        expect(result.total).toBe(expected.length);
      }
    });

    it('pages with offset and counts every match', async () => {
      const second = await storage.listAssets(scopeA(), page({ page: 2, perPage: 4 }));
      expect(idsOf(second.items)).toEqual([A5, A6]);
      expect(second.total).toBe(6);
    });

    it('a count is reused until an import bumps the tenant data version', async () => {
      const key = newKey();
      await storage.insertKey({
        id: key.id,
        tenantId: TENANT_A,
        name: null,
        prefix: key.prefix,
        keyHash: key.keyHash,
        createdAt: new Date().toISOString(),
        expiresAt: null,
      });
      const before = (await storage.findKeyByHash(hashKey(key.key)))!;
      const scope = { tenantId: TENANT_A, dataVersion: before.dataVersion };
      expect((await storage.listAssets(scope, page({ providers: ['GCP'] }))).total).toBe(1);
      await importRecords(storage, [
        [
          'asset',
          {
            tenantId: TENANT_A,
            id: 'sirn:assets:new-gcp',
            provider: 'GCP',
            type: 'GCP::Storage::Bucket',
            firstObservedAt: '2024-01-01',
            lastObservedAt: '2024-01-01',
          },
        ],
      ]);
      const after = (await storage.findKeyByHash(hashKey(key.key)))!;
      expect(after.dataVersion).toBe(before.dataVersion + 1);
      expect(
        (await storage.listAssets({ tenantId: TENANT_A, dataVersion: after.dataVersion }, page({ providers: ['GCP'] })))
          .total,
      ).toBe(2);
      // The other tenant's version did not move.
      const tenants = await storage.listTenants();
      expect(tenants.map((t) => t.tenantId)).toEqual([TENANT_A, TENANT_B]);
    });

    it('keys: stored by hash, listed without secrets, revoked once', async () => {
      const key = newKey();
      await storage.insertKey({
        id: key.id,
        tenantId: TENANT_B,
        name: 'n',
        prefix: key.prefix,
        keyHash: key.keyHash,
        createdAt: '2026-01-01T00:00:00.000Z',
        expiresAt: '2027-01-01T00:00:00.000Z',
      });
      expect(await storage.findKeyByHash(hashKey(`${key.key}x`))).toBeUndefined();
      expect(await storage.findKeyByHash(key.keyHash)).toMatchObject({
        keyId: key.id,
        tenantId: TENANT_B,
        revokedAt: null,
        expiresAt: '2027-01-01T00:00:00.000Z',
        // A key made without scopes holds `read`, as every key made before scopes existed.
        scopes: ['read'],
      });
      expect(await storage.touchKey(key.id, '2026-02-01T00:00:00.000Z')).toBe(true);
      expect(await storage.listKeys(TENANT_B)).toEqual([
        {
          id: key.id,
          name: 'n',
          prefix: key.prefix,
          createdAt: '2026-01-01T00:00:00.000Z',
          expiresAt: '2027-01-01T00:00:00.000Z',
          revokedAt: null,
          lastUsedAt: '2026-02-01T00:00:00.000Z',
          scopes: ['read'],
        },
      ]);
      expect(await storage.revokeKey(key.id, '2026-03-01T00:00:00.000Z')).toBe(true);
      expect(await storage.revokeKey(key.id, '2026-04-01T00:00:00.000Z')).toBe(true);
      expect((await storage.findKeyByHash(key.keyHash))?.revokedAt).toBe('2026-03-01T00:00:00.000Z');
      expect(await storage.revokeKey('key_unknown', '2026-03-01T00:00:00.000Z')).toBe(false);
      // By id (a download link names its key): the same key, the same state.
      expect(await storage.findKeyById(key.id)).toEqual(await storage.findKeyByHash(key.keyHash));
      expect(await storage.findKeyById('key_unknown')).toBeUndefined();
    });

    it("findingPurls: the purls of one asset's finding packages, of the scoped tenant only", async () => {
      const finding = (tenantId: string, purls: (string | null)[]) =>
        [
          'vulnerability',
          {
            tenantId,
            assetId: A1,
            vulnerabilityId: 'CVE-2024-0099',
            severityLevel: 'HIGH',
            firstObservedAt: '2024-05-01',
            lastObservedAt: '2024-06-01',
            packages: purls.map((_, i) => ({ packageName: `p${i}` })),
          },
        ] as [string, Record<string, unknown>];
      expect(
        (await importRecords(storage, [finding(TENANT_A, [null, null]), finding(TENANT_B, [null])])).problems,
      ).toEqual([]);
      // The import format carries no purl; scanners' do (ingest writes them): set two as ingest would.
      for (const [tenantId, position, purl] of [
        [TENANT_A, 1, 'pkg:npm/p1@1.0.0'],
        [TENANT_B, 0, 'pkg:npm/b0@2.0.0'],
      ] as const) {
        await raw.withTenant(tenantId, (db) =>
          db
            .updateTable('vulnerability_packages')
            .set({ purl })
            .where('tenant_id', '=', tenantId)
            .where('asset_id', '=', A1)
            .where('vulnerability_id', '=', 'CVE-2024-0099')
            .where('position', '=', position)
            .execute(),
        );
      }
      expect(await storage.findingPurls(scopeA(), A1)).toEqual([
        { vulnerabilityId: 'CVE-2024-0099', position: 1, purl: 'pkg:npm/p1@1.0.0' },
      ]);
      expect(await storage.findingPurls({ tenantId: TENANT_B, dataVersion: 1 }, A1)).toEqual([
        { vulnerabilityId: 'CVE-2024-0099', position: 0, purl: 'pkg:npm/b0@2.0.0' },
      ]);
      expect(await storage.findingPurls(scopeA(), A2)).toEqual([]);
    });

    it('re-importing a finding replaces its packages whole', async () => {
      const finding = (packages: Record<string, unknown>[]) =>
        [
          'vulnerability',
          {
            tenantId: TENANT_A,
            assetId: A2,
            vulnerabilityId: 'CVE-2024-0004',
            severityLevel: 'MEDIUM',
            firstObservedAt: '2024-05-01',
            lastObservedAt: '2024-06-01',
            packages,
          },
        ] as [string, Record<string, unknown>];
      const packagesOf = () =>
        raw.withTenant(TENANT_A, (db) =>
          db
            .selectFrom('vulnerability_packages')
            .select(['position', 'package_name', 'target_class'])
            .where('tenant_id', '=', TENANT_A)
            .where('asset_id', '=', A2)
            .where('vulnerability_id', '=', 'CVE-2024-0004')
            .orderBy('position')
            .execute(),
        );
      expect(await packagesOf()).toEqual([{ position: 0, package_name: 'lodash', target_class: null }]);
      await importRecords(storage, [finding([{ packageName: 'a', targetClass: 'lang-pkgs' }, { packageName: 'b' }])]);
      expect(await packagesOf()).toEqual([
        { position: 0, package_name: 'a', target_class: 'lang-pkgs' },
        { position: 1, package_name: 'b', target_class: null },
      ]);
      await importRecords(storage, [finding([])]);
      expect(await packagesOf()).toEqual([]);
    });

    it('a bulk write that throws writes nothing', async () => {
      await expect(
        storage.bulkWrite(
          async (writer) => {
            await writer.write('tenant', { tenantId: 'rolled-back', organizationId: 'org', name: null });
            await writer.derive();
            throw new Error('boom');
          },
          { dryRun: false },
        ),
      ).rejects.toThrow('boom');
      expect((await storage.listTenants()).map((t) => t.tenantId)).toEqual([TENANT_A, TENANT_B]);
    });
  });
}
