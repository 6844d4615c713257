// On PostgreSQL a feed load's updates of the findings it flags are mostly heap-only (HOT): no index names the two flag
// columns, and finding pages are filled to 70%, so a flagged finding's new version, where it fits on its page, gets no
// new index entry (migrations 0016 and 0018, docs/DESIGN.md §71 and §88). An index naming a flag, in its key or its
// predicate, makes every one of those updates write an entry in each finding index; a full page does the same for the
// updates it cannot hold. PostgreSQL's own counters of updated and heap-only updated rows tell them apart.
import { Readable } from 'node:stream';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { loadFeedFiles } from '../../src/feeds/load.js';
import { generateRecords } from '../../src/generate/generator.js';
import { importRecords, TEST_DIALECTS, withTestDatabase } from '../helpers.js';
import { kevCatalog } from './kev-catalog.js';

const records = [...generateRecords({ seed: 'heap-only', tenants: 1, assets: 200, findingsPerAsset: 10, risks: 0 })]
  .map((l) => JSON.parse(l) as { kind: string; record: Record<string, unknown> })
  .map((r): [string, Record<string, unknown>] => [r.kind, r.record])
  // Without exemptions the import updates no finding, so the table's counters are the load's alone (PostgreSQL reports
  // a session's counts up to seconds after its transaction, so the import's could otherwise land among them).
  .filter(([kind]) => kind !== 'exemption');
const cves = [
  ...new Set(records.filter(([kind]) => kind === 'vulnerability').map(([, r]) => String(r.vulnerabilityId))),
].sort();
// One CVE in five, as many as the feeds benchmark's KEV and Exploit-DB shares together (5% and 15%): about two findings
// per page gain intel, each as long as a real catalog entry's (CISA's descriptions and notes run to a few hundred
// characters), so that each new version is about twice its row.
const catalogued = cves.filter((_, i) => i % 5 === 0);
const catalog = (() => {
  const parsed = JSON.parse(kevCatalog('2026.11.24', catalogued)) as { vulnerabilities: Record<string, unknown>[] };
  for (const entry of parsed.vulnerabilities) {
    const id = String(entry.cveID);
    entry.shortDescription = `${id}: ${'an input validation flaw lets a remote attacker run code. '.repeat(5)}`;
    entry.notes = `https://nvd.nist.gov/vuln/detail/${id}; https://example.com/advisories/${id}`;
  }
  return JSON.stringify(parsed);
})();

if (TEST_DIALECTS.includes('postgres'))
  describe('feed loads on postgres', () => {
    it('flag the findings with heap-only updates', async () => {
      await withTestDatabase('postgres', async (opened, db) => {
        expect((await importRecords(opened.storage, records)).problems).toEqual([]);
        /**
         * The findings table's updated and heap-only updated rows, once PostgreSQL has counted `atLeast` updates: an
         * idle session reports its counts up to 10 s after its last transaction.
         */
        const counters = async (atLeast: number) => {
          for (let tries = 0; ; tries += 1) {
            const { rows } = await sql<{ updated: string; hot: string }>`select n_tup_upd as updated,
              n_tup_hot_upd as hot from pg_stat_user_tables where relid = 'vulnerabilities'::regclass`.execute(db);
            const updated = Number(rows[0]?.updated);
            if (updated >= atLeast) return { updated, hot: Number(rows[0]?.hot) };
            if (tries > 500) throw new Error(`PostgreSQL counted ${updated} updates of findings, not ${atLeast}`);
            await new Promise((resolve) => setTimeout(resolve, 50));
          }
        };
        const dueDates = async () =>
          new Map(
            (
              await sql<{ k: string; due_at: string | null }>`select asset_id || ' ' || vulnerability_id as k, due_at
                from vulnerabilities`.execute(db)
            ).rows.map((r) => [r.k, r.due_at]),
          );
        const dueBefore = await dueDates();
        const outcome = await loadFeedFiles(opened.storage, [
          { name: 'kev.json', open: () => Readable.from([Buffer.from(catalog)]) },
        ]);
        expect(outcome.problems).toEqual([]);
        const flagged = outcome.load?.findingsUpdated ?? 0;
        expect(flagged).toBeGreaterThan(100);
        const { updated, hot } = await counters(flagged);
        expect(updated).toBe(flagged);
        // A finding whose KEV due date is earlier than its SLA's gets a new due date, which is indexed (the overdue
        // filter's): its update cannot be heap-only (129 of 339 here). Of the others, 122 of 210 were (246 of 339 before
        // due dates, whose new versions took less of the pages' free room); 126 of 339 with pages filled to 85%, none
        // with a flag index or with pages filled to 100%.
        const dueAfter = await dueDates();
        const moved = [...dueAfter].filter(([k, due]) => dueBefore.get(k) !== due).length;
        expect(moved).toBeGreaterThan(0);
        expect(hot).toBeGreaterThan((flagged - moved) * 0.5);
      });
    }, 60_000);
  });
