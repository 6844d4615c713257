// The risk operations of the CLI (`secinv risks derive|dismiss|reopen`), each in a transaction of its own that bumps
// the tenant's data version, so cached counts and ETags of its lists move.
import type { Kysely } from 'kysely';
import type { LifecycleState } from '../../../domain/enums.js';
import { deriveTenantRisks } from './derive.js';
import { setRiskLifecycle } from './lifecycle.js';
import { refreshNextExpiry } from '../expiry.js';
import type { Database } from '../../db/tables.js';
import { bumpDataVersion } from '../../accounts/tenants.js';
import { appendChanges } from '../../changes/append.js';
import { changeCaptures } from '../../changes/capture.js';
import { bulkTransaction } from '../../tx/write.js';
import { takeTenantTurn } from '../../tx/turns.js';
import { type WaitReason } from '../../types.js';
import { analyzeTables, staleTables } from '../../db/statistics.js';
import type { Dialect } from '../../types.js';

/** The risk operations of the CLI, each in a transaction of its own that bumps the tenant's data version. */
export function riskWriteStore(db: Kysely<Database>, dialect: Dialect) {
  return {
    deriveRisks: async (tenantId: string, at: string, onWait?: (reason: WaitReason) => void) => {
      // A first derivation starts from an empty risks table: without the bulk settings PostgreSQL scanned the
      // tenant's risks for every batch of assets.
      let stale: string[] = [];
      const result = await bulkTransaction(
        db,
        dialect,
        async (tx) => {
          await takeTenantTurn(tx, dialect, tenantId, onWait);
          const known = await tx
            .selectFrom('tenants')
            .select('tenant_id')
            .where('tenant_id', '=', tenantId)
            .executeTakeFirst();
          if (!known) return undefined;
          // Every risk of the tenant, and the scores of its scanned assets, may move: the rules' changes.
          const captures = changeCaptures(tx, dialect);
          await captures.allRisks(tenantId);
          const derived = await deriveTenantRisks(tx, tenantId, 'all', at);
          await appendChanges(tx, captures, { cause: { kind: 'rule' }, at });
          await bumpDataVersion(tx, tenantId);
          // Fresh statistics for the risk list's filters and sorts after a change of more than a tenth of the risks.
          if (derived.added + derived.updated + derived.removed > 0) stale = await staleTables(tx, dialect, ['risks']);
          return derived;
        },
        { onWait },
      );
      await analyzeTables(db, dialect, stale);
      return result;
    },
    // Takes the turns a derivation takes: a derivation reads each risk's state and writes it back in the risk's
    // document, so a state set between the two was lost on PostgreSQL (the document said OPEN, the column DISMISSED
    // until the next derivation), and on SQLite the command failed once the other write had run 5 s.
    setRiskLifecycle: (
      tenantId: string,
      riskId: string,
      state: LifecycleState,
      at: string,
      onWait?: (reason: WaitReason) => void,
      until: string | null = null,
    ) =>
      bulkTransaction(
        db,
        dialect,
        async (tx) => {
          await takeTenantTurn(tx, dialect, tenantId, onWait);
          // The risk and its primary asset, whose risk score follows its open risks: the user's changes.
          const captures = changeCaptures(tx, dialect);
          await captures.risks(tenantId, [riskId]);
          const risk = await tx
            .selectFrom('risks')
            .select('primary_asset_id')
            .where('tenant_id', '=', tenantId)
            .where('id', '=', riskId)
            .executeTakeFirst();
          if (risk?.primary_asset_id) await captures.assetStates(tenantId, [risk.primary_asset_id]);
          const changed = await setRiskLifecycle(tx, tenantId, riskId, state, at, until);
          if (changed) {
            await appendChanges(tx, captures, { cause: { kind: 'user' }, at });
            // The dismissal's end is set or cleared: the tenant's earliest expiry moves with it.
            await refreshNextExpiry(tx, tenantId, at);
            await bumpDataVersion(tx, tenantId);
          }
          return changed;
        },
        { takeFile: false, onWait },
      ),
  };
}
