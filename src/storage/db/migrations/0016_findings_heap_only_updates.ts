// Migration 0016_findings_heap_only_updates: on PostgreSQL, a feed load's update of a finding's intel and flags can be
// a heap-only update. An update that changes a column some index names (in its key or its predicate), or whose new row
// version does not fit on the row's page, writes an entry in every index of the table: seven wide ones here, ~200 µs a
// finding, most of a first Exploit-DB load. So the hasKev and hasExploit partial indexes of 0015 are dropped there
// (PostgreSQL answered the flag filters as fast without them, reading the primary key's order with the flag as a
// filter), and finding pages are filled to 85%, leaving room for the intel a load adds (docs/DESIGN.md §71). It applies
// to pages written from now on: a database's existing pages keep their fill until they are written again (`vacuum
// full vulnerabilities` rewrites them all). SQLite updates rows in place and keeps the partial indexes.
// Frozen: the SQL it ran when it was released, per dialect.
import type { FrozenMigration } from './frozen.js';

export const migration: FrozenMigration = {
  sqlite: [],
  postgres: [
    `drop index if exists "vulnerabilities_has_kev_idx"`,
    `drop index if exists "vulnerabilities_has_exploit_idx"`,
    `alter table "vulnerabilities" set (fillfactor = 85)`,
  ],
};
