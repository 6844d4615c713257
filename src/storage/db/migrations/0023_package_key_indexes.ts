// Migration 0023_package_key_indexes: the package-name and target-name indexes of `vulnerability_packages` carry the
// finding's key, so that a package filter's count and the walk's probe of a finding's packages read the index alone
// (docs/DESIGN.md §114). Frozen: the SQL it ran when it was released, per dialect.
import type { FrozenMigration } from './frozen.js';

const statements = [
  `drop index if exists "vulnerability_packages_package_name_idx"`,
  `create index "vulnerability_packages_package_name_idx" on "vulnerability_packages" ("tenant_id", "package_name", "asset_id", "vulnerability_id")`,
  `drop index if exists "vulnerability_packages_target_name_idx"`,
  `create index "vulnerability_packages_target_name_idx" on "vulnerability_packages" ("tenant_id", "target_name", "asset_id", "vulnerability_id")`,
];

export const migration: FrozenMigration = { sqlite: statements, postgres: statements };
