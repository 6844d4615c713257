// A scratch table on disk for work that would not fit in memory: a scanner report's merged findings, which must all
// be known before the first is written (a vulnerability's packages can come from anywhere in the file), and which take
// ~1.8 KB of heap each as objects. Whatever the inventory's database, the scratch is SQLite's private temporary
// database.
import SQLite from 'better-sqlite3';

/**
 * Text values by row number, kept in the order they were added. The caller keeps its own keys → row numbers (it holds
 * every key anyway), so the scratch has no index of its own to maintain.
 */
export interface Scratch {
  /** Stores a new value; returns its row number. */
  add(value: string): number;
  set(row: number, value: string): void;
  get(row: number): string | undefined;
  /** Every value in the order added. */
  values(): IterableIterator<string>;
  close(): void;
}

/** Pages the scratch may keep in memory (SQLite's cache); the rest is on disk. */
const CACHE_KIB = 8192;

export function openScratch(): Scratch {
  // An empty name is SQLite's private temporary database: a file SQLite creates in the temporary folder, unlinked at
  // once and used only for the pages its cache cannot hold, so nothing is left on disk whatever becomes of the process.
  const database = new SQLite('');
  database.pragma('journal_mode = OFF');
  database.pragma('synchronous = OFF');
  database.pragma(`cache_size = -${CACHE_KIB}`);
  database.exec('create table scratch (value text not null)');
  const insert = database.prepare('insert into scratch (value) values (?)');
  const update = database.prepare('update scratch set value = ? where rowid = ?');
  const select = database.prepare('select value from scratch where rowid = ?').pluck();
  const all = database.prepare('select value from scratch order by rowid').pluck();
  return {
    add: (value) => Number(insert.run(value).lastInsertRowid),
    set: (row, value) => void update.run(value, row),
    get: (row) => select.get(row) as string | undefined,
    values: () => all.iterate() as IterableIterator<string>,
    close: () => database.close(),
  };
}
