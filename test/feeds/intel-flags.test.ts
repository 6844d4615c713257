// A feed load moves only the assets' hasKev and hasExploit, and refreshes them by a seek for a flagged finding instead
// of reading every finding (src/storage/derive/fields.ts, refreshIntelFlags). That SQL mirrors deriveAssetFields: after each
// load, on both databases, the assets must hold exactly what a full recomputation of their derived fields gives, with
// exempted findings that carry a KEV or Exploit-DB CVE among them, and with a newer catalog taking flags away again.
// Each finding's flag columns must agree with its stored intel after each load, whichever flags the load moved.
import { Readable } from 'node:stream';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadFeedFiles } from '../../src/feeds/load.js';
import { generateRecords } from '../../src/generate/generator.js';
import { connect } from '../../src/storage/db/connect.js';
import { DERIVED_COLUMNS } from '../../src/storage/read/assets/documents.js';
import { recomputeDerived } from '../../src/storage/derive/fields.js';
import { importRecords, openTestStorage, TEST_DIALECTS, type TestStorage } from '../helpers.js';
import { uuidOf } from '../fixtures.js';
import { kevCatalog } from './kev-catalog.js';

const lines = [...generateRecords({ seed: 'intel-flags', tenants: 2, assets: 80, findingsPerAsset: 6, risks: 0 })];
const records = lines.map((l) => JSON.parse(l) as { kind: string; record: Record<string, unknown> });
const findings = records.filter((r) => r.kind === 'vulnerability').map((r) => r.record);
const cves = [...new Set(findings.map((f) => String(f.vulnerabilityId)))].sort();
// Every third CVE in the first catalog; the second drops half of those. Every fourth has an exploit.
const kevCves = cves.filter((_, i) => i % 3 === 0);
const laterKevCves = kevCves.filter((_, i) => i % 2 === 0);
const exploitCves = cves.filter((_, i) => i % 4 === 1);
// An exemption per tenant of findings that carry catalogued CVEs: exempted findings must not flag their asset.
const exempted = kevCves.slice(0, 3).concat(exploitCves.slice(0, 3));
const tenants = records.filter((r) => r.kind === 'tenant').map((r) => r.record);
const exemptions = tenants.map((t) => ({
  kind: 'exemption',
  record: {
    tenantId: t.tenantId,
    organizationId: t.organizationId,
    exemptionId: uuidOf(1),
    exemption: {
      name: 'catalogued',
      reason: 'ACCEPTED_RISK',
      createdAt: '2026-11-01T00:00:00.000Z',
      updatedAt: '2026-11-01T00:00:00.000Z',
      rules: [{ exemptionType: 'ACCEPTED_RISK', vulnerabilityIds: exempted }],
    },
  },
}));

const exploitDb = [
  'id,file,description,date_published,author,type,platform,port,date_added,date_updated,verified,codes,tags,aliases,screenshot_url,application_url,source_url',
  ...exploitCves.map(
    (cve, i) =>
      `${70000 + i},exploits/linux/remote/${70000 + i}.py,"Example ${i} - Remote Code Execution",2026-09-01,"A. Tester",remote,linux,,2026-09-02,2026-09-03,1,${cve},,,,,`,
  ),
].join('\n');

for (const dialect of TEST_DIALECTS) {
  describe(`assets' intel flags after a feed load, ${dialect}`, () => {
    let db: TestStorage;
    beforeAll(async () => {
      db = await openTestStorage(dialect);
      const parsed = [...records, ...exemptions].map((r) => [r.kind, r.record] as [string, Record<string, unknown>]);
      expect((await importRecords(db.storage, parsed)).problems).toEqual([]);
    });
    afterAll(async () => db.dispose());

    const load = async (files: Record<string, string>) => {
      const outcome = await loadFeedFiles(
        db.storage,
        Object.entries(files).map(([name, text]) => ({ name, open: () => Readable.from([Buffer.from(text)]) })),
      );
      expect(outcome.problems).toEqual([]);
      return outcome.load?.findingsUpdated ?? 0;
    };

    /** Every asset's derived columns as stored, then as a full recomputation inside a rolled-back transaction gives. */
    const storedAndRecomputed = async () => {
      const { db: kysely } = await connect(db.url);
      const read = (q: typeof kysely) =>
        q
          .selectFrom('assets')
          .select(['tenant_id', 'id', ...DERIVED_COLUMNS])
          .orderBy('tenant_id')
          .orderBy('id')
          .execute();
      try {
        const stored = await read(kysely);
        let recomputed: typeof stored = [];
        await kysely
          .transaction()
          .execute(async (tx) => {
            for (const t of tenants) await recomputeDerived(tx, String(t.tenantId), 'all', Date.now());
            recomputed = await read(tx);
            throw new Error('roll back');
          })
          .catch((error: Error) => expect(error.message).toBe('roll back'));
        const exemptedFlagged = await sql<{ n: number }>`select count(*) as n from vulnerabilities
          where is_exempted = 1 and (has_kev = 1 or has_exploit = 1)`.execute(kysely);
        // A finding's two flag columns must say what its stored intel says (a load writes only the flags that move).
        const findingFlags = await kysely
          .selectFrom('vulnerabilities')
          .select(['has_kev', 'has_exploit', 'intel'])
          .execute();
        const disagreeing = findingFlags.filter((f) => {
          const intel = f.intel === null ? null : (JSON.parse(f.intel) as { hasKev: boolean; hasExploit: boolean });
          return (
            f.has_kev !== (intel?.hasKev === true ? 1 : 0) || f.has_exploit !== (intel?.hasExploit === true ? 1 : 0)
          );
        });
        return { stored, recomputed, exemptedFlagged: Number(exemptedFlagged.rows[0]?.n), disagreeing };
      } finally {
        await kysely.destroy();
      }
    };

    it('match a full recomputation after a first load and after a newer catalog', async () => {
      expect(
        await load({ 'kev.json': kevCatalog('2026.11.24', kevCves), 'files_exploits.csv': exploitDb }),
      ).toBeGreaterThan(0);
      const first = await storedAndRecomputed();
      expect(first.stored).toEqual(first.recomputed);
      expect(first.disagreeing).toEqual([]);
      // The case the rule is about is there: exempted findings with a flag, and assets with and without each flag.
      expect(first.exemptedFlagged).toBeGreaterThan(0);
      for (const column of ['has_kev', 'has_exploit'] as const) {
        expect(first.stored.some((a) => a[column] === 1)).toBe(true);
        expect(first.stored.some((a) => a[column] === 0 && a.is_vulnerable === 1)).toBe(true);
      }

      expect(await load({ 'kev.json': kevCatalog('2026.11.25', laterKevCves) })).toBeGreaterThan(0);
      const later = await storedAndRecomputed();
      expect(later.stored).toEqual(later.recomputed);
      const flagged = (rows: typeof first.stored) => rows.filter((a) => a.has_kev === 1).length;
      expect(flagged(later.stored)).toBeLessThan(flagged(first.stored));
      expect(later.disagreeing).toEqual([]);

      // Entries edited but none added or dropped: the findings' intel changes and neither flag moves.
      const edited = kevCatalog('2026.11.26', laterKevCves).replaceAll('2026-11-10', '2026-12-01');
      expect(await load({ 'kev.json': edited })).toBeGreaterThan(0);
      const third = await storedAndRecomputed();
      expect(third.stored).toEqual(later.stored);
      expect(third.disagreeing).toEqual([]);
    });
  });
}
