// A feed's stored rows, replaced by difference: only the rows that were added, changed or removed are written, so
// loading the same file twice writes nothing and a newer catalog costs what it changed.
import type { Transaction } from 'kysely';
import type { FeedData, FeedName } from '../../domain/intel.js';
import type { Database } from '../db/tables.js';
import { insertRows } from '../db/insert-rows.js';
import { appendTo } from '../../lib/collections.js';

/** Feed rows per statement: 3 parameters each stay far below both databases' parameter limits. */
const WRITE_CHUNK = 5000;

type Tx = Transaction<Database>;

/** A feed's rows as key → stored value, and how to write them. */
interface FeedTable {
  read(tx: Tx): Promise<Map<string, string>>;
  remove(tx: Tx, keys: string[]): Promise<void>;
  upsert(tx: Tx, rows: [string, string][]): Promise<void>;
  /** The CVE of a row key. */
  cveOf(key: string): string;
}

export const SEP = '\u0000';

const kevTable: FeedTable = {
  read: async (tx) =>
    new Map((await tx.selectFrom('feed_kev').select(['cve_id', 'entry']).execute()).map((r) => [r.cve_id, r.entry])),
  remove: async (tx, keys) => {
    await tx.deleteFrom('feed_kev').where('cve_id', 'in', keys).execute();
  },
  upsert: async (tx, rows) => {
    await tx
      .insertInto('feed_kev')
      .values(rows.map(([cve_id, entry]) => ({ cve_id, entry })))
      .onConflict((oc) => oc.column('cve_id').doUpdateSet((eb) => ({ entry: eb.ref('excluded.entry') })))
      .execute();
  },
  cveOf: (key) => key,
};

const exploitTable: FeedTable = {
  read: async (tx) =>
    new Map(
      (await tx.selectFrom('feed_exploits').select(['cve_id', 'exploit_id', 'entry']).execute()).map((r) => [
        `${r.cve_id}${SEP}${r.exploit_id}`,
        r.entry,
      ]),
    ),
  remove: async (tx, keys) => {
    const byCve = new Map<string, string[]>();
    for (const key of keys) {
      const [cve_id = '', exploit_id = ''] = key.split(SEP);
      appendTo(byCve, cve_id, exploit_id);
    }
    for (const [cve_id, ids] of byCve)
      await tx.deleteFrom('feed_exploits').where('cve_id', '=', cve_id).where('exploit_id', 'in', ids).execute();
  },
  upsert: async (tx, rows) => {
    await tx
      .insertInto('feed_exploits')
      .values(
        rows.map(([key, entry]) => {
          const [cve_id = '', exploit_id = ''] = key.split(SEP);
          return { cve_id, exploit_id, entry };
        }),
      )
      .onConflict((oc) =>
        oc.columns(['cve_id', 'exploit_id']).doUpdateSet((eb) => ({ entry: eb.ref('excluded.entry') })),
      )
      .execute();
  },
  cveOf: (key) => key.split(SEP)[0] ?? '',
};

const epssTable: FeedTable = {
  read: async (tx) =>
    new Map(
      (await tx.selectFrom('feed_epss').select(['cve_id', 'epss', 'percentile']).execute()).map((r) => [
        r.cve_id,
        `${r.epss},${r.percentile}`,
      ]),
    ),
  remove: async (tx, keys) => {
    await tx.deleteFrom('feed_epss').where('cve_id', 'in', keys).execute();
  },
  // 300,000 rows on a first load: compiled once per shape rather than through the query builder.
  upsert: async (tx, rows) => {
    const values = rows.map(([cve_id, value]) => {
      const [epss = '0', percentile = '0'] = value.split(',');
      return [cve_id, Number(epss), Number(percentile)];
    });
    await insertRows(tx, 'feed_epss', ['cve_id', 'epss', 'percentile'], values, { key: ['cve_id'] });
  },
  cveOf: (key) => key,
};

export const TABLES: Record<FeedName, FeedTable> = { kev: kevTable, exploitdb: exploitTable, epss: epssTable };

/** A feed file's rows as key → stored value (the same serialisation as FeedTable.read). */
function rowsOf(data: FeedData): Map<string, string> {
  switch (data.feed) {
    case 'kev':
      return new Map(data.entries.map((e) => [e.cveID ?? '', JSON.stringify(e)]));
    case 'exploitdb':
      return new Map(data.entries.map((e) => [`${e.cveId}${SEP}${e.exploit.id ?? ''}`, JSON.stringify(e.exploit)]));
    case 'epss':
      return new Map(data.entries.map((e) => [e.cveId, `${e.epss},${e.percentile}`]));
  }
}

/** Replaces a stored feed by difference; returns the keys that changed and the rows the feed now has. */
export async function replaceFeed(tx: Tx, data: FeedData): Promise<{ changed: string[]; entries: number }> {
  const table = TABLES[data.feed];
  const before = await table.read(tx);
  const after = rowsOf(data);
  const removed = [...before.keys()].filter((k) => !after.has(k));
  const written = [...after].filter(([k, v]) => before.get(k) !== v);
  for (let i = 0; i < removed.length; i += WRITE_CHUNK) await table.remove(tx, removed.slice(i, i + WRITE_CHUNK));
  for (let i = 0; i < written.length; i += WRITE_CHUNK) await table.upsert(tx, written.slice(i, i + WRITE_CHUNK));
  return { changed: [...removed, ...written.map(([k]) => k)], entries: after.size };
}
