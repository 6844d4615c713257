// Migration 0015_flag_partial_indexes: the findings' hasKev and hasExploit indexes hold only the findings that have the
// flag. A full index on a 0/1 column moved an entry of every finding a feed load flags, from one end of the index to the
// other: a first KEV load over 1,000,000 findings flags 52,312 and rewrote nearly every page of the index. The findings
// without the flag are read through the primary key's order (docs/DESIGN.md §63).
// Frozen: the SQL it ran when it was released, per dialect.
import type { FrozenMigration } from './frozen.js';

const statements = [
  `drop index if exists "vulnerabilities_has_kev_idx"`,
  `drop index if exists "vulnerabilities_has_exploit_idx"`,
  `create index if not exists "vulnerabilities_has_kev_idx" on "vulnerabilities" ("tenant_id", "is_exempted", "asset_id", "vulnerability_id") where "has_kev" = 1`,
  `create index if not exists "vulnerabilities_has_exploit_idx" on "vulnerabilities" ("tenant_id", "is_exempted", "asset_id", "vulnerability_id") where "has_exploit" = 1`,
];

export const migration: FrozenMigration = { sqlite: statements, postgres: statements };
