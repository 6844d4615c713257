// A scan's part of the bulk write that applies it (pipeline.md §2): its gate read over its assets as the write leaves
// them, and its record ended in the same transaction (or written, scans/records.ts insertScan), so that a scan is
// applied and marked applied at once.
import { sql, type Transaction } from 'kysely';
import { noSeverities, severityOfLevel } from '../../domain/scans.js';
import type { Database } from '../db/tables.js';
import { endScan } from '../scans/queue.js';
import type { ClaimedScan, ScanGate, ScanOutcome } from '../types.js';

export async function openFindings(
  tx: Transaction<Database>,
  tenantId: string,
  assetIds: readonly string[],
): Promise<Omit<ScanGate, 'added'>> {
  const open = noSeverities();
  let kev = 0;
  let exploit = 0;
  if (assetIds.length === 0) return { open, kev, exploit };
  const rows = await tx
    .selectFrom('vulnerabilities')
    .select([
      'severity_level_value as level',
      sql<number>`count(*)`.as('n'),
      sql<number>`sum(has_kev)`.as('kev'),
      sql<number>`sum(has_exploit)`.as('exploit'),
    ])
    .where('tenant_id', '=', tenantId)
    .where('asset_id', 'in', [...assetIds])
    .where('is_exempted', '=', 0)
    .groupBy('severity_level_value')
    .execute();
  for (const row of rows) {
    const severity = severityOfLevel(Number(row.level));
    open[severity] += Number(row.n);
    kev += Number(row.kev);
    exploit += Number(row.exploit);
  }
  return { open, kev, exploit };
}

/** The queued scan a write applies ends `succeeded` with it. */
export async function endAppliedScan(
  tx: Transaction<Database>,
  claim: ClaimedScan | undefined,
  outcome: ScanOutcome,
  at: string,
): Promise<void> {
  if (claim === undefined) throw new Error('endScan: this write applies no queued scan');
  await endScan(tx, claim, { status: 'succeeded', at, ...outcome });
}
