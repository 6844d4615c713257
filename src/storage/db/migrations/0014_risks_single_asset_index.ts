// Migration 0014_risks_single_asset_index: drops the risks index on (tenant, primary asset), whose every lookup the
// index on (tenant, primary asset, id) of migration 0003 answers as well (its leading columns). Each derived risk
// written paid for both; a first KEV load over 1,000,000 findings writes ~42,000 risks (docs/DESIGN.md §58).
// Frozen: the SQL it ran when it was released, per dialect.
import type { FrozenMigration } from './frozen.js';

export const migration: FrozenMigration = {
  sqlite: [`drop index if exists "risks_primary_asset_id_idx"`],
  postgres: [`drop index if exists "risks_primary_asset_id_idx"`],
};
