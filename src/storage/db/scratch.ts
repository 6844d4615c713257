// A scratch table on disk for work that would not fit in memory: a scanner report's merged findings, which must all
// be known before the first is written (a vulnerability's packages can come from anywhere in the file), and which take
// ~1.8 KB of heap each as objects. Whatever the inventory's database, the scratch is SQLite's private temporary
// database.
import SQLite from 'better-sqlite3';

/**
 * Text values by row number, kept in the order they were added, each with a sort key. The caller keeps its own keys →
 * row numbers (it holds every key anyway), so the scratch maintains no index while it is written.
 */
export interface Scratch {
  /** Stores a new value under a sort key; returns its row number. */
  add(value: string, key: string): number;
  set(row: number, value: string): void;
  get(row: number): string | undefined;
  /**
   * Every key and value in key order (SQLite's binary order: the bytes of the UTF-8, as the inventory's indexes sort).
   * The first call builds the keys' index: one sort, instead of an index kept up to date through every add.
   */
  byKey(): IterableIterator<[key: string, value: string]>;
  close(): void;
}

/** Pages the scratch may keep in memory (SQLite's cache); the rest is on disk. 2 MiB against 8 MiB: no slower. */
const CACHE_KIB = 2048;
/** Values written per statement (two parameters each). */
const BATCH = 500;

export function openScratch(): Scratch {
  // An empty name is SQLite's private temporary database: a file SQLite creates in the temporary folder, unlinked at
  // once and used only for the pages its cache cannot hold, so nothing is left on disk whatever becomes of the process.
  const database = new SQLite('');
  database.pragma('journal_mode = OFF');
  database.pragma('synchronous = OFF');
  database.pragma(`cache_size = -${CACHE_KIB}`);
  database.exec('create table scratch (value text not null, key text not null)');
  const insertMany = (count: number) =>
    database.prepare(`insert into scratch (rowid, value, key) values ${Array(count).fill('(?, ?, ?)').join(', ')}`);
  const insertBatch = insertMany(BATCH);
  const update = database.prepare('update scratch set value = ? where rowid = ?');
  const select = database.prepare('select value from scratch where rowid = ?').pluck();
  let sorted: SQLite.Statement | null = null;
  // Values not yet written, rows `written + 1` on: one multi-row statement per BATCH instead of one per value (a
  // 200,000-finding report spent 1 s in single-row inserts).
  let pending: [value: string, key: string][] = [];
  let written = 0;
  const flush = () => {
    if (pending.length === 0) return;
    const statement = pending.length === BATCH ? insertBatch : insertMany(pending.length);
    statement.run(pending.flatMap(([value, key], i) => [written + 1 + i, value, key]));
    written += pending.length;
    pending = [];
  };
  return {
    add: (value, key) => {
      pending.push([value, key]);
      const row = written + pending.length;
      if (pending.length === BATCH) flush();
      return row;
    },
    set: (row, value) => {
      if (row <= written) update.run(value, row);
      else {
        const waiting = pending[row - written - 1];
        if (waiting !== undefined) waiting[0] = value;
      }
    },
    get: (row) => (row > written ? pending[row - written - 1]?.[0] : (select.get(row) as string | undefined)),
    byKey: () => {
      flush();
      if (sorted === null) {
        database.exec('create index scratch_key on scratch (key)');
        sorted = database.prepare('select key, value from scratch order by key').raw();
      }
      return sorted.iterate() as IterableIterator<[string, string]>;
    },
    close: () => database.close(),
  };
}
