// `secinv risks derive|dismiss|reopen`: re-run the risk rules of a tenant by hand, and set a risk's lifecycle state
// (docs/RISKS.md). Each is one transaction; an unknown tenant or risk changes nothing and exits 1.
import type { Config } from '../config.js';
import type { LifecycleState } from '../domain/enums.js';
import { UserError } from '../domain/errors.js';
import { waitingFor, withDatabase, type Io } from './io.js';

const counted = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

export async function risksDerive(
  config: Readonly<Config>,
  opts: { tenant: string; now?: () => Date },
  io: Io,
): Promise<void> {
  const at = (opts.now ?? (() => new Date()))().toISOString();
  const result = await withDatabase(config.databaseUrl, io, (storage) =>
    storage.deriveRisks(opts.tenant, at, waitingFor(io)),
  );
  if (result === undefined)
    throw new UserError(`unknown tenant '${opts.tenant}' (create it with \`secinv tenants create\`)`);
  io.stderr.write(
    `derived: ${counted(result.assets, 'asset')}, ${counted(result.risks, 'risk')} (${result.added} new, ${result.updated} changed, ${result.removed} gone)\n`,
  );
}

export async function risksSetState(
  config: Readonly<Config>,
  riskId: string,
  opts: { tenant: string; state: LifecycleState; now?: () => Date },
  io: Io,
): Promise<void> {
  const at = (opts.now ?? (() => new Date()))().toISOString();
  const changed = await withDatabase(config.databaseUrl, io, (storage) =>
    storage.setRiskLifecycle(opts.tenant, riskId, opts.state, at, waitingFor(io)),
  );
  // Another tenant's risk is indistinguishable from a missing one.
  if (!changed) throw new UserError(`tenant ${opts.tenant} has no risk '${riskId}'`);
  io.stderr.write(`risk ${riskId} is now ${opts.state}\n`);
}
