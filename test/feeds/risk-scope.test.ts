// After a changed EPSS file, the risk rules run again only over the assets that have a finding they can cite
// (src/storage/derive/risks/derive.ts, assetsWithCitableFindings). That SQL mirrors isCitable and citesExploitable
// (src/domain/risk-engine.ts): on both databases, it must name exactly the assets the domain rule names when applied
// to every finding, with KEV findings, exploitable findings on exposed or privileged assets, and exempted ones.
// After a KEV or Exploit-DB load, they run only over the assets where a finding whose intel changed is citable before
// or after (src/storage/feeds/load.ts): a derivation of every asset afterwards must find nothing left to change.
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isCitable } from '../../src/domain/risk-engine.js';
import { loadFeedFiles } from '../../src/feeds/load.js';
import { generateRecords } from '../../src/generate/generator.js';
import { connect } from '../../src/storage/db/connect.js';
import { reachOf } from '../../src/storage/derive/risks/compute.js';
import { assetsWithCitableFindings, deriveTenantRisks } from '../../src/storage/derive/risks/derive.js';
import { inlineComputer } from '../../src/storage/derive/risks/thread.js';
import { importRecords, openTestStorage, TEST_DIALECTS, type TestStorage } from '../helpers.js';
import { uuidOf } from '../fixtures.js';
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
      exemptionId: uuidOf(2),
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
// Every third CVE has an exploit (some of them in KEV too); a later file gives half of them a second one, and the last
// one an exploit for a CVE whose findings are all exempted.
const exploitCves = cves.filter((_, i) => i % 3 === 1 || i % 15 === 0);
const exploitDb = (extra: boolean, more: readonly string[] = []) =>
  [
    'id,file,description,date_published,author,type,platform,port,date_added,date_updated,verified,codes,tags,aliases,screenshot_url,application_url,source_url',
    ...exploitCves.flatMap((cve, i) =>
      [0, ...(extra && i % 2 === 0 ? [1] : [])].map(
        (n) =>
          `${80000 + i * 2 + n},exploits/linux/remote/${80000 + i * 2 + n}.py,"Example ${i} - RCE",2026-09-01,"A. Tester",remote,linux,,2026-09-02,2026-09-03,1,${cve},,,,,`,
      ),
    ),
    ...more.map(
      (cve, i) =>
        `${90000 + i},exploits/linux/local/${90000 + i}.c,"Local ${i}",2026-09-01,"B. Tester",local,linux,,2026-09-02,2026-09-03,0,${cve},,,,,`,
    ),
  ].join('\n');

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

    it('leave no risk behind after KEV and Exploit-DB loads that change intel', async () => {
      /** What a derivation of every asset of every tenant would still change, in a transaction rolled back. */
      const leftToChange = async () => {
        const { db: kysely } = await connect(db.url);
        let counts: number[] = [];
        try {
          await kysely
            .transaction()
            .execute(async (tx) => {
              for (const tenantId of tenants) {
                // Inline: a worker thread per run costs more than these few assets' rules (the two agree byte for
                // byte, test/storage/derive/risks/derive.test.ts).
                const d = await deriveTenantRisks(tx, tenantId, 'all', '2026-11-30T00:00:00.000Z', inlineComputer);
                counts.push(d.added, d.updated, d.removed);
              }
              throw new Error('roll back');
            })
            .catch((error: Error) => expect(error.message).toBe('roll back'));
          const risks = await kysely.selectFrom('risks').select('id').where('derived', '=', 1).execute();
          counts = [...counts, risks.length > 0 ? 0 : 1];
        } finally {
          await kysely.destroy();
        }
        return counts;
      };
      // The import derived no risks: every asset's rules run once first.
      for (const tenantId of tenants)
        expect(await db.storage.deriveRisks(tenantId, '2026-11-29T00:00:00.000Z')).toBeDefined();
      const none = tenants.flatMap(() => [0, 0, 0]).concat(0);
      expect(await leftToChange()).toEqual(none);
      const steps: Record<string, string>[] = [
        { 'files_exploits.csv': exploitDb(false) },
        { 'files_exploits.csv': exploitDb(true) },
        {
          'kev.json': kevCatalog(
            '2026.11.25',
            kevCves.filter((_, i) => i % 2 === 0),
          ),
        },
        { 'kev.json': kevCatalog('2026.11.26', kevCves).replaceAll('2026-11-10', '2026-12-01') },
        // Only exempted findings change: no risk can move, and the tenants' data versions still must (their findings'
        // exploits are served from the rows the load wrote).
        { 'files_exploits.csv': exploitDb(true, kevCves.slice(0, 2)) },
      ];
      // The tenants that have a finding of an exempted CVE: the last load changes theirs alone.
      const carriersOfExempted = tenants.filter((t) =>
        records.some(
          (r) =>
            r.kind === 'vulnerability' &&
            r.record.tenantId === t &&
            kevCves.slice(0, 2).includes(String(r.record.vulnerabilityId)),
        ),
      );
      expect(carriersOfExempted.length).toBeGreaterThan(0);
      const versions = async () => {
        const { db: kysely } = await connect(db.url);
        try {
          const rows = await kysely.selectFrom('tenants').select(['tenant_id', 'data_version']).execute();
          return new Map(rows.map((r) => [r.tenant_id, Number(r.data_version)]));
        } finally {
          await kysely.destroy();
        }
      };
      for (const files of steps) {
        const before = await versions();
        const outcome = await loadFeedFiles(
          db.storage,
          Object.entries(files).map(([name, text]) => ({ name, open: () => Readable.from([Buffer.from(text)]) })),
        );
        expect(outcome.problems).toEqual([]);
        expect(outcome.load?.findingsUpdated).toBeGreaterThan(0);
        expect(await leftToChange()).toEqual(none);
        const after = await versions();
        const moved = tenants.filter((t) => (after.get(t) ?? 0) > (before.get(t) ?? Infinity));
        expect(moved).toEqual(files === steps.at(-1) ? carriersOfExempted : tenants);
      }
    });
  });
}
