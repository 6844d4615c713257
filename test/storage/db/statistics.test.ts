// Planner statistics after a bulk write are taken again only for the tables whose row count moved by more than a
// tenth since they were taken, as seen from inside the writing transaction (src/storage/db/statistics.ts).
import { readFileSync } from 'node:fs';
import { sql, type Transaction } from 'kysely';
import type { Database } from '../../../src/storage/db/tables.js';
import { describe, expect, it } from 'vitest';
import {
  analyzedRows,
  analyzeFilled,
  analyzeTables,
  staleTables,
  statisticsStale,
} from '../../../src/storage/db/statistics.js';
import { fixture } from '../../fixtures.js';
import { openStorage } from '../../../src/storage/index.js';
import { importRecords, TEST_DIALECTS, withTestDatabase } from '../../helpers.js';
import { ingestTexts } from '../../ingest/run.js';

const TRIVY = new URL('../../fixtures/ingest/trivy/trivy-image-example-app-all-statuses.json', import.meta.url);

describe('statisticsStale', () => {
  it('is true for a table with rows and no statistics, and past a tenth of the analysed rows either way', () => {
    expect(statisticsStale(undefined, 0)).toBe(false);
    expect(statisticsStale(undefined, 1)).toBe(true);
    expect(statisticsStale(0, 0)).toBe(false);
    expect(statisticsStale(0, 1)).toBe(true);
    expect(statisticsStale(1000, 1100)).toBe(false);
    expect(statisticsStale(1000, 1101)).toBe(true);
    expect(statisticsStale(1000, 900)).toBe(false);
    expect(statisticsStale(1000, 899)).toBe(true);
    expect(statisticsStale(1000, 1050, 0.05)).toBe(false);
    expect(statisticsStale(1000, 1051, 0.05)).toBe(true);
  });
});

const epssRows = (from: number, count: number) =>
  Array.from({ length: count }, (_, i) => ({ cve_id: `CVE-2026-${10000 + from + i}`, epss: 0.5, percentile: 0.5 }));

for (const dialect of TEST_DIALECTS) {
  describe(`statistics on ${dialect}`, () => {
    it('a first import leaves statistics of every table it filled, the documents with their findings', () =>
      withTestDatabase(dialect, async (opened, db) => {
        expect((await importRecords(opened.storage, fixture)).problems).toEqual([]);
        const count = async (table: 'vulnerabilities' | 'assets' | 'asset_groups') =>
          Number((await sql<{ n: string }>`select count(*) as n from ${sql.table(table)}`.execute(db)).rows[0]?.n);
        const analyzed = await analyzedRows(db, dialect);
        expect(await count('vulnerabilities')).toBeGreaterThan(0);
        expect(analyzed.get('vulnerabilities')).toBe(await count('vulnerabilities'));
        expect(analyzed.get('vulnerability_documents')).toBe(await count('vulnerabilities'));
        expect(analyzed.get('assets')).toBe(await count('assets'));
        expect(analyzed.get('asset_groups')).toBe(await count('asset_groups'));
        // Nothing moved since: nothing is analysed again.
        expect(await staleTables(db, dialect)).toEqual([]);
      }));

    it('a table filled from empty has statistics inside the transaction that filled it (PostgreSQL)', () =>
      withTestDatabase(dialect, async (opened, db) => {
        const seen = await db.transaction().execute(async (tx) => {
          await tx.insertInto('feed_epss').values(epssRows(0, 300)).execute();
          const filled = await analyzeFilled(tx, dialect, ['feed_epss', 'feed_kev']);
          // What the planner of this transaction's next statements sees.
          const analyzed = (await analyzedRows(tx, dialect)).get('feed_epss');
          return { filled, analyzed, stale: await staleTables(tx, dialect, ['feed_epss', 'feed_kev'], filled) };
        });
        if (dialect === 'sqlite') {
          // SQLite plans the statements of a first import well without statistics; it analyses after the commit.
          expect(seen).toEqual({ filled: [], analyzed: undefined, stale: ['feed_epss'] });
        } else {
          // The table still empty (feed_kev) is not analysed; the filled one is, and is analysed again after commit.
          expect(seen).toEqual({ filled: ['feed_epss'], analyzed: 300, stale: ['feed_epss'] });
        }
      }));

    it('a write whose caller has tables waiting for their statistics does not count their rows again', () =>
      withTestDatabase(dialect, async (opened) => {
        expect((await importRecords(opened.storage, fixture)).problems).toEqual([]);
        const statements: string[] = [];
        const storage = await openStorage(opened.url, { onQuery: (text) => void statements.push(text) });
        try {
          const report = readFileSync(TRIVY, 'utf8');
          // As a server's scan runner: the statistics of what each write left stale are taken later.
          const ingest = async (waiting: string[], region: string) => {
            const added: string[] = [];
            const staleStatistics = { waiting: new Set(waiting), add: (t: readonly string[]) => void added.push(...t) };
            statements.length = 0;
            const result = await ingestTexts(
              storage,
              { 'trivy.json': report },
              { provider: 'AWS', region, staleStatistics },
            );
            expect(result.problems).toEqual([]);
            const counted = statements
              .filter((text) => /^select count\(\*\)/.test(text))
              .map((text) => /from "(\w+)"/.exec(text)?.[1]);
            return { added, counted };
          };
          // A new image into the fixture's tenant moves its findings by far more than a tenth.
          const first = await ingest([], 'eu-west-1');
          expect(first.added).toContain('vulnerabilities');
          // SQLite counts every table; PostgreSQL's counters screen the ones this write did not move.
          if (dialect === 'sqlite') expect(first.counted).toContain('vulnerabilities');
          const second = await ingest(first.added, 'eu-west-2');
          expect(second.counted.filter((table) => first.added.includes(table!))).toEqual([]);
          expect(new Set(second.added)).toEqual(new Set(first.added));
        } finally {
          await storage.close();
        }
      }));

    it('a table is analysed again once its rows moved by more than a tenth, and only then', () =>
      withTestDatabase(dialect, async (opened, db) => {
        const only = ['feed_epss'];
        // As a writer asks: inside its transaction, after its writes, before its commit; analysed after the commit.
        const write = async (change: (tx: Transaction<Database>) => Promise<unknown>) => {
          const stale = await db.transaction().execute(async (tx) => {
            await change(tx);
            return staleTables(tx, dialect, only);
          });
          await analyzeTables(db, dialect, stale);
          return stale;
        };
        const insert = (from: number, count: number) => (tx: Transaction<Database>) =>
          tx.insertInto('feed_epss').values(epssRows(from, count)).execute();
        // PostgreSQL's live-row counter learns of a commit within about a second (and may count a write that a VACUUM
        // counted already again); a later writer screens with it.
        const reported = async (rows: number) => {
          if (dialect === 'sqlite') return;
          const live = async () =>
            Number(
              (
                await sql<{ n: string }>`select n_live_tup as n from pg_stat_user_tables
                  where relid = 'feed_epss'::regclass`.execute(db)
              ).rows[0]?.n,
            );
          for (let tries = 0; (await live()) < rows; tries += 1) {
            if (tries > 200) throw new Error(`the live rows of feed_epss are ${await live()}, not ${rows}`);
            await new Promise((resolve) => setTimeout(resolve, 50));
          }
        };

        expect(await write(insert(0, 100))).toEqual(['feed_epss']);
        expect((await analyzedRows(db, dialect)).get('feed_epss')).toBe(100);

        // The transaction's own rows count at once: 10 more is not more than a tenth.
        expect(await write(insert(100, 10))).toEqual([]);
        expect((await analyzedRows(db, dialect)).get('feed_epss')).toBe(100);

        // One more, with the 10 of the last write: 11 is more than a tenth.
        await reported(110);
        expect(await write(insert(110, 1))).toEqual(['feed_epss']);
        expect((await analyzedRows(db, dialect)).get('feed_epss')).toBe(111);

        // Fewer rows count as much as more.
        expect(
          await write((tx) => tx.deleteFrom('feed_epss').where('cve_id', '>=', 'CVE-2026-10090').execute()),
        ).toEqual(['feed_epss']);
        expect((await analyzedRows(db, dialect)).get('feed_epss')).toBe(90);

        // A rolled-back write moves nothing.
        await db
          .transaction()
          .execute(async (tx) => {
            await insert(200, 50)(tx);
            throw new Error('rolled back');
          })
          .catch(() => undefined);
        expect(await write(insert(300, 5))).toEqual([]);
      }));
  });
}
