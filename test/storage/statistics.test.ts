// Planner statistics after a bulk write are taken again only for the tables whose row count moved by more than a
// tenth since they were taken (src/storage/statistics.ts).
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { connect } from '../../src/storage/connect.js';
import { analyzedRows, refreshStatistics, statisticsStale } from '../../src/storage/statistics.js';
import { fixture } from '../fixtures.js';
import { importRecords, openTestStorage, TEST_DIALECTS } from '../helpers.js';

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
  });
});

const epssRows = (from: number, count: number) =>
  Array.from({ length: count }, (_, i) => ({ cve_id: `CVE-2026-${10000 + from + i}`, epss: 0.5, percentile: 0.5 }));

for (const dialect of TEST_DIALECTS) {
  describe(`statistics on ${dialect}`, () => {
    it('a first import leaves statistics of every table it filled, the documents with their findings', async () => {
      const opened = await openTestStorage(dialect);
      const { db } = await connect(opened.url);
      try {
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
        expect(await refreshStatistics(db, dialect)).toEqual([]);
      } finally {
        await db.destroy();
        await opened.dispose();
      }
    });

    it('a table is analysed again once its rows moved by more than a tenth, and only then', async () => {
      const opened = await openTestStorage(dialect);
      const { db } = await connect(opened.url);
      try {
        const only = ['feed_epss'];
        const insert = (from: number, count: number) =>
          db.insertInto('feed_epss').values(epssRows(from, count)).execute();
        await insert(0, 100);
        expect(await refreshStatistics(db, dialect, only)).toEqual(['feed_epss']);
        expect((await analyzedRows(db, dialect)).get('feed_epss')).toBe(100);

        await insert(100, 10);
        expect(await refreshStatistics(db, dialect, only)).toEqual([]);
        expect((await analyzedRows(db, dialect)).get('feed_epss')).toBe(100);

        await insert(110, 1);
        expect(await refreshStatistics(db, dialect, only)).toEqual(['feed_epss']);
        expect((await analyzedRows(db, dialect)).get('feed_epss')).toBe(111);

        // Fewer rows count as much as more.
        await db.deleteFrom('feed_epss').where('cve_id', '>=', 'CVE-2026-10090').execute();
        expect(await refreshStatistics(db, dialect, only)).toEqual(['feed_epss']);
        expect((await analyzedRows(db, dialect)).get('feed_epss')).toBe(90);
      } finally {
        await db.destroy();
        await opened.dispose();
      }
    });
  });
}
