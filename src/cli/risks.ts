// `secinv risks derive|dismiss|reopen`: re-run the risk rules of a tenant by hand, and set a risk's lifecycle state
// (docs/RISKS.md). Each is one transaction; an unknown tenant or risk changes nothing and exits 1.
import type { Config } from '../config.js';
import type { LifecycleState } from '../domain/enums.js';
import { UserError } from '../domain/errors.js';
import { formatTimestamp, parseTimestamp } from '../domain/time.js';
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

/**
 * `--until`: a day (`YYYY-MM-DD`, its 00:00:00Z) or an RFC 3339 date-time, after `now`, in the output format. Checked
 * before the database is opened: a bad one changes nothing.
 */
export function dismissalEnd(text: string, now: Date): string {
  const ms = parseTimestamp(text.trim());
  if (ms === null)
    throw new UserError(
      `--until '${text}' is not a date: give YYYY-MM-DD (midnight UTC) or an RFC 3339 date-time such as 2027-01-31T12:00:00Z`,
    );
  if (ms <= now.getTime())
    throw new UserError(`--until ${formatTimestamp(ms)} is not in the future (now is ${now.toISOString()})`);
  return formatTimestamp(ms);
}

export async function risksSetState(
  config: Readonly<Config>,
  riskId: string,
  opts: { tenant: string; state: LifecycleState; until?: string | undefined; now?: () => Date },
  io: Io,
): Promise<void> {
  const now = (opts.now ?? (() => new Date()))();
  const until = opts.until === undefined ? null : dismissalEnd(opts.until, now);
  const changed = await withDatabase(config.databaseUrl, io, (storage) =>
    storage.setRiskLifecycle(opts.tenant, riskId, opts.state, now.toISOString(), waitingFor(io), until),
  );
  // Another tenant's risk is indistinguishable from a missing one.
  if (!changed) throw new UserError(`tenant ${opts.tenant} has no risk '${riskId}'`);
  io.stderr.write(`risk ${riskId} is now ${opts.state}${until === null ? '' : ` until ${until}`}\n`);
}
