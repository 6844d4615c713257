// Schema migrations, run by every command that opens the database (src/storage/db/connect.ts). Each migration is a file
// of frozen SQL (see frozen.ts): once released it is never edited, and every schema change is a new file, added to
// the list below under the next number.
import type { Migration, MigrationProvider } from 'kysely';
import type { Dialect } from '../../types.js';
import { runFrozen, type FrozenMigration } from './frozen.js';
import { migration as initial } from './0001_initial.js';
import { migration as rowLevelSecurity } from './0002_row_level_security.js';
import { migration as riskIndexesAndSecrets } from './0003_risk_indexes_and_secrets.js';
import { migration as vulnerabilityIndexes } from './0004_vulnerability_indexes.js';
import { migration as findingSources } from './0005_finding_sources.js';
import { migration as feedsAndAliases } from './0006_feeds_and_aliases.js';
import { migration as vexAndPurls } from './0007_vex_and_purls.js';
import { migration as checksAndDerivedRisks } from './0008_checks_and_derived_risks.js';
import { migration as assetDocuments } from './0009_asset_documents.js';
import { migration as findingDocuments } from './0010_finding_documents.js';
import { migration as findingIds } from './0011_finding_ids.js';
import { migration as deferrableKeys } from './0012_deferrable_keys.js';
import { migration as assetsFillfactor } from './0013_assets_fillfactor.js';
import { migration as risksSingleAssetIndex } from './0014_risks_single_asset_index.js';
import { migration as flagPartialIndexes } from './0015_flag_partial_indexes.js';
import { migration as findingsHeapOnlyUpdates } from './0016_findings_heap_only_updates.js';
import { migration as documentsLz4 } from './0017_documents_lz4.js';
import { migration as feedLoadRoom } from './0018_feed_load_room.js';
import { migration as scansAndKeyScopes } from './0019_scans_and_key_scopes.js';
import { migration as changeLog } from './0020_change_log.js';
import { migration as webhooks } from './0021_webhooks.js';
import { migration as remediation } from './0022_remediation.js';
import { migration as packageKeyIndexes } from './0023_package_key_indexes.js';

const ordered: Record<string, FrozenMigration> = {
  '0001_initial': initial,
  '0002_row_level_security': rowLevelSecurity,
  '0003_risk_indexes_and_secrets': riskIndexesAndSecrets,
  '0004_vulnerability_indexes': vulnerabilityIndexes,
  '0005_finding_sources': findingSources,
  '0006_feeds_and_aliases': feedsAndAliases,
  '0007_vex_and_purls': vexAndPurls,
  '0008_checks_and_derived_risks': checksAndDerivedRisks,
  '0009_asset_documents': assetDocuments,
  '0010_finding_documents': findingDocuments,
  '0011_finding_ids': findingIds,
  '0012_deferrable_keys': deferrableKeys,
  '0013_assets_fillfactor': assetsFillfactor,
  '0014_risks_single_asset_index': risksSingleAssetIndex,
  '0015_flag_partial_indexes': flagPartialIndexes,
  '0016_findings_heap_only_updates': findingsHeapOnlyUpdates,
  '0017_documents_lz4': documentsLz4,
  '0018_feed_load_room': feedLoadRoom,
  '0019_scans_and_key_scopes': scansAndKeyScopes,
  '0020_change_log': changeLog,
  '0021_webhooks': webhooks,
  '0022_remediation': remediation,
  '0023_package_key_indexes': packageKeyIndexes,
};

export const migrations = (dialect: Dialect): MigrationProvider => ({
  getMigrations: () =>
    Promise.resolve(
      Object.fromEntries(
        Object.entries(ordered).map(([name, frozen]): [string, Migration] => [
          name,
          { up: (db) => runFrozen(db, frozen[dialect]) },
        ]),
      ),
    ),
});
