// Reads the failed checks ingest stored (table `checks`) straight from the database: the API does not serve them
// (the risk rules turn them into risks), so tests look at the rows themselves.
import type { FailedCheck } from '../../src/domain/checks.js';
import { rawTenantAccess } from '../helpers.js';

export interface StoredCheck {
  assetId: string;
  source: string;
  checkId: string;
  severityLevelValue: number;
  firstObservedAt: string;
  lastObservedAt: string;
  doc: FailedCheck;
}

/** Every stored check of the tenant (optionally of one asset), by asset, source and check id. */
export async function storedChecks(url: string, tenantId: string, assetId?: string): Promise<StoredCheck[]> {
  const raw = await rawTenantAccess(url);
  try {
    const rows = await raw.withTenant(tenantId, (db) => {
      let query = db.selectFrom('checks').selectAll().where('tenant_id', '=', tenantId);
      if (assetId !== undefined) query = query.where('asset_id', '=', assetId);
      return query.orderBy('asset_id').orderBy('source').orderBy('check_id').execute();
    });
    return rows.map((r) => ({
      assetId: r.asset_id,
      source: r.source,
      checkId: r.check_id,
      severityLevelValue: Number(r.severity_level_value),
      firstObservedAt: r.first_observed_at,
      lastObservedAt: r.last_observed_at,
      doc: JSON.parse(r.doc) as FailedCheck,
    }));
  } finally {
    await raw.close();
  }
}

/** `assetId checkId` of each check, for comparing lists. */
export const checkKeys = (checks: readonly StoredCheck[]): string[] => checks.map((c) => `${c.assetId} ${c.checkId}`);
