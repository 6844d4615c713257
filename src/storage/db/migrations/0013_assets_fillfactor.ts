// Migration 0013_assets_fillfactor: on PostgreSQL, asset pages are filled to 85%, so that an update of columns no index
// covers (a feed load's hasKev and hasExploit, a scan's fields) can write the row's new version on its own page and
// leave the ~25 asset indexes alone (a heap-only update). Without the room, a first KEV load over 100,000 assets spent
// 5.4 s rewriting the flags of ~17,000 assets, 2.5 s with it (docs/DESIGN.md §57). It applies to pages written
// from now on: a database's existing pages keep their fill until they are written again. SQLite updates rows in place
// and has no such setting. Frozen: the SQL it ran when it was released, per dialect.
import type { FrozenMigration } from './frozen.js';

export const migration: FrozenMigration = {
  sqlite: [],
  postgres: [`alter table "assets" set (fillfactor = 85)`],
};
