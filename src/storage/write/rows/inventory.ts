// The write-rows step for every kind but findings (rows/finding-batch.ts): one batch of records of a kind, upserted as
// multi-row statements. A record replaces what is stored under its identity whole, as an import's records do.
import type { Insertable, Transaction } from 'kysely';
import type { RecordsByKind } from '../../../domain/records.js';
import type { Database } from '../../db/tables.js';
import { upsertRows } from '../../db/insert-rows.js';
import { assetDocumentRow, assetRow } from './assets.js';

const json = (value: unknown): Buffer => Buffer.from(JSON.stringify(value));
const flag = (value: boolean): number => (value ? 1 : 0);

/** A batch of the writer (at most 800 rows of at most 17 columns) in one statement: within both databases' limits. */
export const upsert = <T extends keyof Database>(
  tx: Transaction<Database>,
  table: T,
  key: readonly string[],
  rows: Insertable<Database[T]>[],
) => upsertRows(tx, table, key, rows, rows.length);

type InventoryKind = Exclude<keyof RecordsByKind, 'vulnerability'>;

/** Writes one batch of each kind but findings. */
export const inventoryWriters = (
  tx: Transaction<Database>,
): { [K in InventoryKind]: (records: RecordsByKind[K][]) => Promise<void> } => ({
  tenant: (records) =>
    upsert(
      tx,
      'tenants',
      ['tenant_id'],
      records.map((r) => ({ tenant_id: r.tenantId, organization_id: r.organizationId, name: r.name })),
    ),
  environment: (records) =>
    upsert(
      tx,
      'environments',
      ['tenant_id', 'environment_id'],
      records.map((r) => ({
        tenant_id: r.tenantId,
        environment_id: r.environmentId,
        environment_id_lc: r.environmentId.toLowerCase(),
        name: r.name,
        is_production: flag(r.isProduction),
      })),
    ),
  integration: (records) =>
    upsert(
      tx,
      'integrations',
      ['tenant_id', 'integration_id'],
      records.map((r) => ({
        tenant_id: r.tenantId,
        integration_id: r.integrationId,
        environment_id: r.environmentId,
        doc: json(r.integration),
      })),
    ),
  assetGroup: async (records) => {
    await upsert(
      tx,
      'asset_groups',
      ['tenant_id', 'asset_group_id'],
      records.map((r) => ({ tenant_id: r.tenantId, asset_group_id: r.assetGroupId, name: r.name })),
    );
    // A group's membership is replaced whole, like every imported record.
    for (const r of records) {
      await tx
        .deleteFrom('asset_group_members')
        .where('tenant_id', '=', r.tenantId)
        .where('asset_group_id', '=', r.assetGroupId)
        .execute();
      const members = [...new Set(r.assetIds)].map((assetId) => ({
        tenant_id: r.tenantId,
        asset_group_id: r.assetGroupId,
        asset_id: assetId,
      }));
      for (let i = 0; i < members.length; i += 1000)
        await tx
          .insertInto('asset_group_members')
          .values(members.slice(i, i + 1000))
          .execute();
    }
  },
  exemption: (records) =>
    upsert(
      tx,
      'exemptions',
      ['tenant_id', 'exemption_id'],
      records.map((r) => ({
        tenant_id: r.tenantId,
        exemption_id: r.exemptionId,
        doc: JSON.stringify(r.exemption),
        // The normalised timestamp, whose text order is its time order: the expiry runner compares it as text.
        expires_at: r.exemption.expiresAt ?? null,
      })),
    ),
  asset: async (records) => {
    await upsert(tx, 'assets', ['tenant_id', 'id'], records.map(assetRow));
    await upsert(tx, 'asset_documents', ['tenant_id', 'asset_id'], records.map(assetDocumentRow));
  },
  risk: (records) =>
    upsert(
      tx,
      'risks',
      ['tenant_id', 'id'],
      records.map(({ tenantId, risk: r }) => ({
        tenant_id: tenantId,
        id: r.id,
        risk_type_id: r.riskTypeId,
        integration_id: r.integrationId,
        primary_asset_id: r.primaryAssetId,
        severity_level: r.severityLevel,
        lifecycle_state: r.lifecycleState,
        resource_type: r.meta?.resourceType ?? null,
        discovered_at: r.discoveredAt,
        score: r.score,
        doc: json(r),
      })),
    ),
});
