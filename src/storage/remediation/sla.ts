// A tenant's SLA (pipeline.md §6): setting it moves the due date of every finding whose severity it changes, in one
// write that takes the tenant's turn, as every write does. Only the findings whose due date moves are captured and
// written, so the rollup moves their overdue counts on the day of the change (src/storage/changes/rollup.ts); the log
// gets no change (a due date is not one of its tracked fields).
import type { Kysely, Transaction } from 'kysely';
import { dueAt, slaByLevel, slaOf, type Sla } from '../../domain/remediation.js';
import type { Intel } from '../../domain/intel.js';
import { bumpDataVersion } from '../accounts/tenants.js';
import { appendChanges } from '../changes/append.js';
import { changeCaptures } from '../changes/capture.js';
import { updateRows } from '../db/insert-rows.js';
import type { Database } from '../db/tables.js';
import type { FindingKey } from '../read/vulnerabilities/documents.js';
import { bulkTransaction } from '../tx/write.js';
import { takeTenantTurn } from '../tx/turns.js';
import type { Dialect, Storage } from '../types.js';

/** Findings read per statement. */
const PAGE = 5000;

/**
 * Sets every due date of the tenant's findings by the SLA, in key order a page at a time; returns the keys of those
 * whose due date moved, after `beforeUpdate` was told each page of them.
 */
export async function recomputeDueDates(
  tx: Transaction<Database>,
  tenantId: string,
  sla: Sla,
  beforeUpdate: (keys: FindingKey[]) => Promise<void>,
): Promise<number> {
  const byLevel = slaByLevel(sla);
  let moved = 0;
  let after: FindingKey | undefined;
  for (;;) {
    let query = tx
      .selectFrom('vulnerabilities')
      .select(['asset_id', 'vulnerability_id', 'first_observed_at', 'severity_level_value', 'intel', 'due_at'])
      .where('tenant_id', '=', tenantId);
    if (after !== undefined) {
      const { asset_id, vulnerability_id } = after;
      query = query.where((eb) =>
        eb(eb.refTuple('asset_id', 'vulnerability_id'), '>', eb.tuple(asset_id, vulnerability_id)),
      );
    }
    const rows = await query.orderBy('asset_id').orderBy('vulnerability_id').limit(PAGE).execute();
    const changed: [string, string, string | null][] = [];
    for (const r of rows) {
      const kevDue = r.intel === null ? null : (JSON.parse(r.intel) as Partial<Intel>).knownExploit?.dueDate;
      const due = dueAt(r.first_observed_at, byLevel[r.severity_level_value], kevDue);
      if (due !== r.due_at) changed.push([r.asset_id, r.vulnerability_id, due]);
    }
    if (changed.length > 0) {
      await beforeUpdate(changed.map(([asset_id, vulnerability_id]) => ({ asset_id, vulnerability_id })));
      await updateRows(tx, 'vulnerabilities', tenantId, ['asset_id', 'vulnerability_id'], ['due_at'], changed);
      moved += changed.length;
    }
    const last = rows[rows.length - 1];
    if (rows.length < PAGE || last === undefined) return moved;
    after = last;
  }
}

export function slaStore(db: Kysely<Database>, dialect: Dialect): Pick<Storage, 'tenantSla' | 'setTenantSla'> {
  return {
    tenantSla: async (tenantId) => {
      const row = await db.selectFrom('tenants').select('sla').where('tenant_id', '=', tenantId).executeTakeFirst();
      return row === undefined ? undefined : slaOf(row.sla);
    },
    setTenantSla: (tenantId, sla, at, onWait) =>
      bulkTransaction(
        db,
        dialect,
        async (tx) => {
          await takeTenantTurn(tx, dialect, tenantId, onWait);
          const updated = await tx
            .updateTable('tenants')
            .set({ sla: JSON.stringify(sla) })
            .where('tenant_id', '=', tenantId)
            .executeTakeFirst();
          if (Number(updated.numUpdatedRows) === 0) return undefined;
          const captures = changeCaptures(tx, dialect);
          const moved = await recomputeDueDates(tx, tenantId, sla, (keys) => captures.findings(tenantId, keys));
          await appendChanges(tx, captures, { cause: { kind: 'user' }, at });
          await bumpDataVersion(tx, tenantId);
          return { moved };
        },
        { takeFile: false, onWait },
      ),
  };
}
