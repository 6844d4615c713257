// Migration 0018_feed_load_room: on PostgreSQL, finding and asset pages are filled to 70%, so that a feed load's
// updates stay heap-only. A heap-only update writes the row's new version on its own page, and the whole new version
// must fit there beside the old one until the load commits. A first Exploit-DB load gives one finding in seven ~600
// bytes of intel: at 85%, 43% of the three first loads' finding updates fitted, and the others wrote an entry in each of
// the five finding indexes (12.0 s of a 26 s Exploit-DB load). At 70%, 82% fitted and those updates took 6.1 s; the
// assets' flag updates, 97% against 74% (docs/DESIGN.md §88). It applies to pages written from now on: a database's
// existing pages keep their fill until they are written again (`vacuum full` rewrites them). SQLite updates rows in
// place and has no such setting. Frozen: the SQL it ran when it was released, per dialect.
import type { FrozenMigration } from './frozen.js';

export const migration: FrozenMigration = {
  sqlite: [],
  postgres: [`alter table "vulnerabilities" set (fillfactor = 70)`, `alter table "assets" set (fillfactor = 70)`],
};
