// What the writer stores for one asset: its row and its documents. Built here once, for the write
// (src/storage/write/writer.ts) and for telling whether writing an asset again would change what is stored
// (src/storage/write/compare.ts).
import type { Insertable } from 'kysely';
import type { RecordsByKind } from '../../../domain/records.js';
import { isScannedAsset } from '../../../domain/checks.js';
import { metadataSearchText, serviceName } from '../../../domain/search.js';
import type { AssetDocumentTable, AssetTable } from '../../db/tables.js';

const flag = (value: boolean): number => (value ? 1 : 0);

export function assetRow({ tenantId, asset: a, rawData }: RecordsByKind['asset']): Insertable<AssetTable> {
  return {
    tenant_id: tenantId,
    id: a.id,
    integration_id: a.integrationId,
    execution_id: a.executionId,
    provider: a.provider,
    name: a.name,
    name_lc: a.name?.toLowerCase() ?? null,
    region: a.region,
    service: a.service,
    service_lc: a.service?.toLowerCase() ?? null,
    service_name_lc: serviceName(a.service),
    resource_type: a.resourceType,
    first_observed_at: a.firstObservedAt,
    last_observed_at: a.lastObservedAt,
    risk_score: a.riskScore,
    operational_state: a.operationalState,
    is_publicly_exposed: flag(a.isPubliclyExposed),
    has_admin_privileges: flag(a.hasAdminPrivileges),
    has_overly_permissive_privileges: flag(a.hasOverlyPermissivePrivileges),
    is_susceptible_to_privilege_escalation: flag(a.isSusceptibleToPrivilegeEscalation),
    n_low_secrets: a.numberOfLowSecrets,
    n_medium_secrets: a.numberOfMediumSecrets,
    n_high_secrets: a.numberOfHighSecrets,
    n_critical_secrets: a.numberOfCriticalSecrets,
    // Derived columns start empty; recomputeDerived() fills them before the transaction commits.
    n_low: 0,
    n_medium: 0,
    n_high: 0,
    n_critical: 0,
    vulnerability_score: 0,
    is_vulnerable: 0,
    has_kev: 0,
    has_exploit: 0,
    is_exploitable: 0,
    tags: JSON.stringify(a.tags),
    scanned: flag(isScannedAsset(rawData)),
  };
}

export function assetDocumentRow({
  tenantId,
  asset: a,
  rawData,
}: RecordsByKind['asset']): Insertable<AssetDocumentTable> {
  return {
    tenant_id: tenantId,
    asset_id: a.id,
    doc: Buffer.from(JSON.stringify(a)),
    raw_data: JSON.stringify(rawData),
    meta_search: metadataSearchText(rawData),
  };
}
