// Which of a batch's findings an asset already has (src/storage/write/stored.ts, existingFindings): the ingest deletes their
// packages and aliases before writing them again. PostgreSQL answers it with one primary-key probe per id instead of an
// `in (…)` list; both databases must give exactly the stored subset, of that asset and tenant only. And what a re-scan
// keeps of an asset's stored findings (storedFindings): read in pages, with repeated values shared, the same as the rows.
import { describe, expect, it } from 'vitest';
import { existingFindings, newFindingIds, scanReads } from '../../../src/storage/write/stored.js';
import { fixture } from '../../fixtures.js';
import { importRecords, TENANT_A, TENANT_B, TEST_DIALECTS, withTestDatabase } from '../../helpers.js';

for (const dialect of TEST_DIALECTS)
  describe(`existing findings of an asset, ${dialect}`, () => {
    it('are the stored ones among the ids asked, of that asset and tenant only; with their first-seen times', () =>
      withTestDatabase(dialect, async (opened, db) => {
        expect((await importRecords(opened.storage, fixture)).problems).toEqual([]);
        const stored = await db
          .selectFrom('vulnerabilities')
          .select(['tenant_id', 'asset_id', 'vulnerability_id'])
          .orderBy('tenant_id')
          .orderBy('asset_id')
          .orderBy('vulnerability_id')
          .execute();
        const ofA = stored.filter((r) => r.tenant_id === TENANT_A);
        const asset = ofA[0]?.asset_id ?? '';
        const mine = ofA.filter((r) => r.asset_id === asset).map((r) => r.vulnerability_id);
        // Ids of other assets and of the other tenant, and ones nobody has, asked beside the asset's own.
        const others = stored
          .filter((r) => r.asset_id !== asset || r.tenant_id !== TENANT_A)
          .map((r) => r.vulnerability_id);
        expect(mine.length).toBeGreaterThan(0);
        expect(others.length).toBeGreaterThan(0);
        const asked = [...new Set([...mine, ...others, 'CVE-1999-0001', "quote'd \\ id"])];
        const found = await existingFindings(db, TENANT_A, asset, asked);
        expect(found.map((r) => r.vulnerability_id).sort()).toEqual([...mine].sort());
        expect(new Set(found.map((r) => r.asset_id))).toEqual(new Set([asset]));
        // The other tenant may have an asset of the same id: its own findings answer, never tenant A's.
        const ofB = stored
          .filter((r) => r.tenant_id === TENANT_B && r.asset_id === asset && asked.includes(r.vulnerability_id))
          .map((r) => r.vulnerability_id);
        const foundB = await existingFindings(db, TENANT_B, asset, asked);
        expect(foundB.map((r) => r.vulnerability_id).sort()).toEqual(ofB.sort());
        expect(await existingFindings(db, TENANT_A, asset, [])).toEqual([]);

        // What an ingest keeps of the asset's stored findings: each one's first- and last-seen times and scanner, of that
        // tenant.
        const kept = await db
          .selectFrom('vulnerabilities')
          .select(['tenant_id', 'vulnerability_id', 'first_observed_at', 'last_observed_at', 'source'])
          .where('asset_id', '=', asset)
          .execute();
        for (const tenant of [TENANT_A, TENANT_B]) {
          const expected = kept
            .filter((r) => r.tenant_id === tenant)
            .map((r): [string, { firstObservedAt: string; lastObservedAt: string; source: string | null }] => [
              r.vulnerability_id,
              { firstObservedAt: r.first_observed_at, lastObservedAt: r.last_observed_at, source: r.source },
            ])
            .sort(([a], [b]) => (a < b ? -1 : 1));
          const read = [...(await scanReads(db).storedFindings(tenant, asset))].sort(([a], [b]) => (a < b ? -1 : 1));
          expect(read).toEqual(expected);
        }
      }));
  });

for (const dialect of TEST_DIALECTS)
  describe(`new finding ids, ${dialect}`, () => {
    it('are as many as asked, ascending, above every stored id, and never given twice', () =>
      withTestDatabase(dialect, async (opened, db) => {
        expect((await importRecords(opened.storage, fixture)).problems).toEqual([]);
        const top = Number(
          (
            await db
              .selectFrom('vulnerabilities')
              .select((eb) => eb.fn.max('id').as('top'))
              .executeTakeFirstOrThrow()
          ).top,
        );
        expect(top).toBeGreaterThan(0);
        const first = await newFindingIds(db, 1500);
        expect(first).toHaveLength(1500);
        expect(first[0]).toBeGreaterThan(top);
        expect(first.every((id, i) => i === 0 || id > first[i - 1]!)).toBe(true);
        expect(await newFindingIds(db, 0)).toEqual([]);
        if (dialect === 'postgres') {
          // From the shared sequence: a second call, as a concurrent writer's, gets other ids.
          const second = await newFindingIds(db, 10);
          expect(second[0]).toBeGreaterThan(first[first.length - 1]!);
        }
      }));
  });
