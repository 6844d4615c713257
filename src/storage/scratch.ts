// A scratch table on disk for work that would not fit in memory: a scanner report's merged findings, which must all
// be known before the first is written (a vulnerability's packages can come from anywhere in the file), and which take
// ~1.8 KB of heap each as objects. Whatever the inventory's database, the scratch is SQLite's private temporary
// database.
import SQLite from 'better-sqlite3';

/** Text values by key, kept in the order each key was first put. */
export interface Scratch {
  put(key: string, value: string): void;
  get(key: string): string | undefined;
  /** Every value in first-put order. */
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
  database.exec('create table scratch (key text primary key, value text not null)');
  const insert = database.prepare(
    'insert into scratch (key, value) values (?, ?) on conflict (key) do update set value = excluded.value',
  );
  const select = database.prepare('select value from scratch where key = ?').pluck();
  const all = database.prepare('select value from scratch order by rowid').pluck();
  return {
    put: (key, value) => void insert.run(key, value),
    get: (key) => select.get(key) as string | undefined,
    values: () => all.iterate() as IterableIterator<string>,
    close: () => database.close(),
  };
}
