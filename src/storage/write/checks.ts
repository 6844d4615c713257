// Failed configuration checks per asset and scanner (Prowler, Trivy misconfigurations): written by ingest, read by
// the risk derivation (src/storage/derive/risks/derive.ts). A check id appears once per (asset, scanner).
import type { Kysely, Transaction } from 'kysely';
import type { CheckResults, FailedCheck } from '../../domain/checks.js';
import { severityLevelValues } from '../../domain/enums.js';
import { fromTenant } from '../tx/tenant.js';
import type { Database } from '../db/tables.js';
import type { CheckCounts } from '../types.js';

type Db = Kysely<Database> | Transaction<Database>;
const BATCH = 500;

/** See BulkWriter.recordChecks (src/storage/types.ts). */
export async function recordChecks(
  db: Db,
  tenantId: string,
  assetId: string,
  results: CheckResults & { source: string; observedAt: string; resolve: boolean },
): Promise<CheckCounts> {
  const stored = await fromTenant(db as Kysely<Database>, 'checks', tenantId)
    .select(['check_id', 'first_observed_at', 'last_observed_at', 'severity_level_value', 'doc'])
    .where('checks.asset_id', '=', assetId)
    .where('checks.source', '=', results.source)
    .execute();
  const before = new Map(stored.map((r) => [r.check_id, r]));
  // One failure per check id: a later report row of the same check on the same resource adds nothing.
  const failed = new Map<string, FailedCheck>();
  for (const check of results.failed) if (!failed.has(check.checkId)) failed.set(check.checkId, check);

  const gone = new Set<string>();
  for (const id of results.passed) if (before.has(id) && !failed.has(id)) gone.add(id);
  if (results.complete && results.resolve) for (const id of before.keys()) if (!failed.has(id)) gone.add(id);

  const listed = [...failed.values()].map((check) => ({
    tenant_id: tenantId,
    asset_id: assetId,
    source: results.source,
    check_id: check.checkId,
    severity_level_value: severityLevelValues[check.severity],
    first_observed_at: before.get(check.checkId)?.first_observed_at ?? results.observedAt,
    last_observed_at: results.observedAt,
    doc: JSON.stringify(check),
  }));
  // A failure stored as the report lists it again (the same report twice) is not written: see src/storage/write/compare.ts.
  const rows = listed.filter((row) => {
    const was = before.get(row.check_id);
    return (
      was === undefined ||
      was.severity_level_value !== row.severity_level_value ||
      was.last_observed_at !== row.last_observed_at ||
      was.doc !== row.doc
    );
  });
  for (let i = 0; i < rows.length; i += BATCH) {
    await db
      .insertInto('checks')
      .values(rows.slice(i, i + BATCH))
      .onConflict((oc) =>
        oc.columns(['tenant_id', 'asset_id', 'source', 'check_id']).doUpdateSet((eb) => ({
          severity_level_value: eb.ref('excluded.severity_level_value'),
          last_observed_at: eb.ref('excluded.last_observed_at'),
          doc: eb.ref('excluded.doc'),
        })),
      )
      .execute();
  }
  const stale = [...gone];
  for (let i = 0; i < stale.length; i += BATCH) {
    await db
      .deleteFrom('checks')
      .where('tenant_id', '=', tenantId)
      .where('asset_id', '=', assetId)
      .where('source', '=', results.source)
      .where('check_id', 'in', stale.slice(i, i + BATCH))
      .execute();
  }
  const updated = rows.filter((r) => before.has(r.check_id)).length;
  const added = rows.length - updated;
  return { added, updated, unchanged: listed.length - rows.length, resolved: stale.length };
}
