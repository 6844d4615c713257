// The derive step of a bulk write: what the written rows imply, computed again for exactly what the run touched (its
// Touched): the tenant's VEX exemptions (new findings may be what a stored statement speaks of), the derived asset
// fields (src/storage/derive/fields.ts) and, when the run derives risks, the assets' risks
// (src/storage/derive/risks/derive.ts).
import type { Transaction } from 'kysely';
import type { Database } from '../db/tables.js';
import { recomputeDerived } from '../derive/fields.js';
import { addDerivations, deriveTenantRisks, NO_DERIVATION } from '../derive/risks/derive.js';
import { hasVexStatements, rematchVex } from '../derive/vex.js';
import type { RiskDerivation } from '../types.js';
import type { Touched } from './touched.js';

export async function deriveTouched(
  tx: Transaction<Database>,
  touched: Touched,
  /** Tenants whose VEX exemptions were re-matched since their last write: they need not be matched again. */
  vexCurrent: ReadonlySet<string>,
  deriveRisksAt: string | undefined,
  /** Runs before the derived state of a tenant's scope is written: the change log captures it (docs/DESIGN.md §100). */
  beforeDerive: (tenantId: string, scope: 'all' | ReadonlySet<string>) => Promise<void> = () => Promise.resolve(),
): Promise<RiskDerivation> {
  for (const tenantId of [...touched.tenants()]) {
    if (vexCurrent.has(tenantId) || !(await hasVexStatements(tx, tenantId))) continue;
    if ((await rematchVex(tx, tenantId)).changed) touched.touch(tenantId);
  }
  let derivation = NO_DERIVATION;
  for (const [tenantId, scope] of touched.take()) {
    if (scope !== 'all' && scope.size === 0) continue;
    await beforeDerive(tenantId, scope);
    await recomputeDerived(tx, tenantId, scope, Date.now());
    if (deriveRisksAt !== undefined)
      derivation = addDerivations(derivation, await deriveTenantRisks(tx, tenantId, scope, deriveRisksAt));
  }
  return derivation;
}
