// Dismissals and exemptions that expire (pipeline.md §6, docs/DESIGN.md §110): a dismissal's `risk_states.until` and
// an exemption's `expires_at`, each tenant's earliest pending one in `tenants.next_expiry_at`, and the runner that a
// server calls every SECINV_EXPIRY_INTERVAL_SECONDS: it reopens the dismissals and lifts the exemptions that are due,
// tenant by tenant, in one write per tenant that takes the tenant's turn. The turn serialises the servers of one
// database and each write re-reads what is due after taking it, so what one runner did the next finds done.
import type { Kysely, Transaction } from 'kysely';
import { parseTimestamp } from '../../domain/time.js';
import { chunks } from '../../lib/collections.js';
import { bumpDataVersion } from '../accounts/tenants.js';
import { appendChanges } from '../changes/append.js';
import { changeCaptures } from '../changes/capture.js';
import type { Database } from '../db/tables.js';
import { fromTenant } from '../tx/tenant.js';
import { takeTenantTurn } from '../tx/turns.js';
import { bulkTransaction } from '../tx/write.js';
import type { Dialect, ExpiryRun, WaitReason } from '../types.js';
import { recomputeDerived } from './fields.js';
import { deriveTenantRisks } from './risks/derive.js';
import { setRiskLifecycle } from './risks/lifecycle.js';

type Db = Kysely<Database> | Transaction<Database>;

/**
 * Sets the tenant's `next_expiry_at`: the earliest `until` of its dismissals (one past due counts: it is pending until
 * the runner reopens it, which clears it) and the earliest `expires_at` after `now` of its exemptions (one at or before
 * `now` is no longer matched by the derivation of the same write, which ran at `now`). Every write that sets or clears
 * one of them calls it, inside its transaction, after it.
 */
export async function refreshNextExpiry(db: Db, tenantId: string, now: string): Promise<string | null> {
  const q = db as Kysely<Database>;
  const dismissal = await fromTenant(q, 'risk_states', tenantId)
    .select((eb) => eb.fn.min<string | null>('risk_states.until').as('at'))
    .executeTakeFirst();
  const exemption = await fromTenant(q, 'exemptions', tenantId)
    .select((eb) => eb.fn.min<string | null>('exemptions.expires_at').as('at'))
    .where('exemptions.expires_at', '>', now)
    .executeTakeFirst();
  const times = [dismissal?.at ?? null, exemption?.at ?? null].filter((t): t is string => t !== null);
  const next = times.length === 0 ? null : times.reduce((a, b) => (b < a ? b : a));
  await q.updateTable('tenants').set({ next_expiry_at: next }).where('tenant_id', '=', tenantId).execute();
  return next;
}

/** The assets that still have a match of an exemption expired by `now`: the ones whose derived fields move. */
async function assetsOfExpiredExemptions(db: Db, tenantId: string, now: string): Promise<Set<string>> {
  const q = db as Kysely<Database>;
  const expired = await fromTenant(q, 'exemptions', tenantId)
    .select('exemptions.exemption_id')
    .where('exemptions.expires_at', '<=', now)
    .execute();
  const assets = new Set<string>();
  for (const ids of chunks(expired.map((e) => e.exemption_id))) {
    const rows = await fromTenant(q, 'vulnerability_exemptions', tenantId)
      .select('vulnerability_exemptions.asset_id')
      .distinct()
      .where('vulnerability_exemptions.exemption_id', 'in', ids)
      .execute();
    for (const r of rows) assets.add(r.asset_id);
  }
  return assets;
}

/** What one tenant's expiry did: the dismissals reopened, the assets whose exemptions lapsed. */
interface TenantExpiry {
  reopened: number;
  assets: number;
}

/** The expiries of one tenant that are due at `now`, inside its write; nothing when another runner did them. */
async function expireTenant(
  tx: Transaction<Database>,
  dialect: Dialect,
  tenantId: string,
  now: string,
  onWait: ((reason: WaitReason) => void) | undefined,
) {
  await takeTenantTurn(tx, dialect, tenantId, onWait);
  // Read again after the turn: a runner of another process that held it has done what was due.
  const tenant = await tx
    .selectFrom('tenants')
    .select('next_expiry_at')
    .where('tenant_id', '=', tenantId)
    .executeTakeFirst();
  if (tenant?.next_expiry_at == null || tenant.next_expiry_at > now) return undefined;
  const captures = changeCaptures(tx, dialect);
  // Exemptions first: the risks derived again keep the states they have, which the reopening then moves.
  const assets = await assetsOfExpiredExemptions(tx, tenantId, now);
  if (assets.size > 0) {
    await captures.assets(tenantId, assets);
    await recomputeDerived(tx, tenantId, assets, parseTimestamp(now) ?? Date.now());
    await deriveTenantRisks(tx, tenantId, assets, now);
  }
  const due = await fromTenant(tx, 'risk_states', tenantId)
    .select('risk_states.risk_id')
    .where('risk_states.until', '<=', now)
    .orderBy('risk_states.risk_id')
    .execute();
  let reopened = 0;
  for (const { risk_id } of due) {
    await captures.risks(tenantId, [risk_id]);
    const risk = await fromTenant(tx, 'risks', tenantId)
      .select('risks.primary_asset_id')
      .where('risks.id', '=', risk_id)
      .executeTakeFirst();
    if (risk?.primary_asset_id) await captures.assetStates(tenantId, [risk.primary_asset_id]);
    if (await setRiskLifecycle(tx, tenantId, risk_id, 'OPEN', now)) reopened += 1;
    // A derived risk that left the inventory is not in `risks`: its remembered state reopens all the same.
    else
      await tx
        .updateTable('risk_states')
        .set({ lifecycle_state: 'OPEN', changed_at: now, until: null })
        .where('tenant_id', '=', tenantId)
        .where('risk_id', '=', risk_id)
        .execute();
  }
  await appendChanges(tx, captures, { cause: { kind: 'expiry' }, at: now });
  await refreshNextExpiry(tx, tenantId, now);
  await bumpDataVersion(tx, tenantId);
  return { reopened, assets: assets.size } satisfies TenantExpiry;
}

/** The expiry runner's storage operation. */
export function expiryStore(db: Kysely<Database>, dialect: Dialect) {
  return {
    async expireDue(now: Date, onWait?: (reason: WaitReason) => void): Promise<ExpiryRun> {
      const at = now.toISOString();
      // `tenants` is a reference table on Citus: this one statement across tenants reads it on the coordinator.
      const due = await db
        .selectFrom('tenants')
        .select('tenant_id')
        .where('next_expiry_at', '<=', at)
        .orderBy('tenant_id')
        .execute();
      const run: ExpiryRun = { tenants: 0, reopened: 0, assets: 0 };
      for (const { tenant_id } of due) {
        const done = await bulkTransaction(db, dialect, (tx) => expireTenant(tx, dialect, tenant_id, at, onWait), {
          takeFile: false,
          onWait,
        });
        if (done === undefined) continue;
        run.tenants += 1;
        run.reopened += done.reopened;
        run.assets += done.assets;
      }
      return run;
    },
  };
}
