// After a changed EPSS file, the risk rules run again only over the assets that have a finding they can cite
// (src/storage/risk-derive.ts, assetsWithCitableFindings). That SQL mirrors isCitable and citesExploitable
// (src/domain/risk-engine.ts): on both databases, it must name exactly the assets the domain rule names when applied
// to every finding, with KEV findings, exploitable findings on exposed or privileged assets, and exempted ones.
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isCitable } from '../../src/domain/risk-engine.js';
import { loadFeedFiles } from '../../src/feeds/load.js';
import { generateRecords } from '../../src/generate/generator.js';
import { connect } from '../../src/storage/connect.js';
import { reachOf } from '../../src/storage/risk-compute.js';
import { assetsWithCitableFindings } from '../../src/storage/risk-derive.js';
import { importRecords, openTestStorage, TEST_DIALECTS, type TestStorage } from '../helpers.js';
import { kevCatalog } from './kev-catalog.js';

const lines = [...generateRecords({ seed: 'risk-scope', tenants: 2, assets: 120, findingsPerAsset: 6, risks: 0 })];
const records = lines.map((l) => JSON.parse(l) as { kind: string; record: Record<string, unknown> });
const tenants = records.filter((r) => r.kind === 'tenant').map((r) => String(r.record.tenantId));
const cves = [
  ...new Set(records.filter((r) => r.kind === 'vulnerability').map((r) => String(r.record.vulnerabilityId))),
].sort();
// Every fifth CVE in the catalog; the first two of those exempted in every tenant.
const kevCves = cves.filter((_, i) => i % 5 === 0);
const exemptions = records
  .filter((r) => r.kind === 'tenant')
  .map((t) => ({
    kind: 'exemption',
    record: {
      tenantId: t.record.tenantId,
      organizationId: t.record.organizationId,
      exemptionId: 'exempt-two',
      exemption: {
        name: 'two',
        reason: 'ACCEPTED_RISK',
        createdAt: '2026-11-01T00:00:00.000Z',
        updatedAt: '2026-11-01T00:00:00.000Z',
        rules: [{ exemptionType: 'ACCEPTED_RISK', vulnerabilityIds: kevCves.slice(0, 2) }],
      },
    },
  }));
const kev = kevCatalog('2026.11.24', kevCves);

for (const dialect of TEST_DIALECTS) {
  describe(`assets with a citable finding, ${dialect}`, () => {
    let db: TestStorage;
    beforeAll(async () => {
      db = await openTestStorage(dialect);
      const parsed = [...records, ...exemptions].map((r) => [r.kind, r.record] as [string, Record<string, unknown>]);
      expect((await importRecords(db.storage, parsed)).problems).toEqual([]);
      const outcome = await loadFeedFiles(db.storage, [
        { name: 'kev.json', open: () => Readable.from([Buffer.from(kev)]) },
      ]);
      expect(outcome.problems).toEqual([]);
    });
    afterAll(async () => db.dispose());

    it('are the assets isCitable names over every finding', async () => {
      const { db: kysely } = await connect(db.url);
      try {
        for (const tenantId of tenants) {
          const assets = await kysely
            .selectFrom('assets')
            .select(['id', 'is_publicly_exposed', 'has_admin_privileges', 'has_overly_permissive_privileges'])
            .where('tenant_id', '=', tenantId)
            .execute();
          const reach = new Map(assets.map((a) => [a.id, reachOf(a)]));
          const findings = await kysely
            .selectFrom('vulnerabilities')
            .select(['asset_id', 'has_kev', 'is_exploitable', 'is_exempted'])
            .where('tenant_id', '=', tenantId)
            .execute();
          const citable = (f: (typeof findings)[number]) =>
            f.is_exempted === 0 &&
            isCitable({ hasKev: f.has_kev === 1, isExploitable: f.is_exploitable === 1 }, reach.get(f.asset_id)!);
          const expected = new Set(findings.filter(citable).map((f) => f.asset_id));
          expect([...(await assetsWithCitableFindings(kysely, tenantId))].sort()).toEqual([...expected].sort());
          // The cases the rule is about are there: each way in, and the ways out.
          const kevOnly = findings.filter((f) => f.is_exempted === 0 && f.has_kev === 1);
          const exploitableReached = findings.filter(
            (f) => f.is_exempted === 0 && f.is_exploitable === 1 && citable(f) && f.has_kev === 0,
          );
          const exploitableUnreached = findings.filter(
            (f) => f.is_exempted === 0 && f.is_exploitable === 1 && !citable(f),
          );
          const exemptedKev = findings.filter((f) => f.is_exempted === 1 && f.has_kev === 1);
          expect([kevOnly, exploitableReached, exploitableUnreached, exemptedKev].map((l) => l.length > 0)).toEqual([
            true,
            true,
            true,
            true,
          ]);
          expect(expected.size).toBeGreaterThan(0);
          expect(expected.size).toBeLessThan(assets.length);
        }
      } finally {
        await kysely.destroy();
      }
    });
  });
}
