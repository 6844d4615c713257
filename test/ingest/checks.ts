// Reads what ingest stored straight from the database where the API cannot show it: the failed checks (table
// `checks`; the risk rules turn them into risks) and whether every finding row has its document and no more.
import { sql } from 'kysely';
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

/** The tenant's finding rows, its document rows, and documents whose finding row is gone (none, when all is well). */
export async function storedDocumentCounts(
  url: string,
  tenantId: string,
): Promise<{ findings: number; documents: number; orphans: number }> {
  const raw = await rawTenantAccess(url);
  try {
    return await raw.withTenant(tenantId, async (db) => {
      const { rows } = await sql<{ findings: number | string; documents: number | string; orphans: number | string }>`
        select (select count(*) from vulnerabilities where tenant_id = ${tenantId}) as findings,
          (select count(*) from vulnerability_documents where tenant_id = ${tenantId}) as documents,
          (select count(*) from vulnerability_documents as d where d.tenant_id = ${tenantId} and not exists
            (select 1 from vulnerabilities as v where v.tenant_id = d.tenant_id and v.id = d.finding_id)) as orphans
      `.execute(db);
      const row = rows[0]!;
      return { findings: Number(row.findings), documents: Number(row.documents), orphans: Number(row.orphans) };
    });
  } finally {
    await raw.close();
  }
}
