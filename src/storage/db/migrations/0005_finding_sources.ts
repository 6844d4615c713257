// Migration 0005_finding_sources: which scanner reported each finding, so a re-scan replaces what the same scanner
// reported for the same asset (null: loaded by `secinv import`).
// Frozen: the SQL it ran when it was released, per dialect. Never edit it; change the schema with a new migration.
import type { FrozenMigration } from './frozen.js';

export const migration: FrozenMigration = {
  sqlite: [`alter table "vulnerabilities" add column "source" text`],
  postgres: [`alter table "vulnerabilities" add column "source" text collate "C"`],
};
