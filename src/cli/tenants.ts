// `secinv tenants create|list`: a tenant without writing an import file.
import { randomUUID } from 'node:crypto';
import type { Config } from '../config.js';
import { UserError } from '../domain/errors.js';
import { findingSeverities } from '../domain/enums.js';
import { isUuid } from '../domain/ids.js';
import { DEFAULT_SLA, slaDaysProblem, type Sla } from '../domain/remediation.js';
import { waitingFor, withDatabase, type Io } from './io.js';
import { printTable } from './table.js';

const uuidOption = (value: string | undefined, flag: string): string => {
  if (value === undefined) return randomUUID();
  if (!isUuid(value)) throw new UserError(`${flag} must be a UUID, not '${value}'`);
  return value.toLowerCase();
};

export async function tenantsCreate(
  config: Readonly<Config>,
  opts: { name: string; id?: string; organizationId?: string },
  io: Io,
): Promise<void> {
  const name = opts.name.trim();
  if (name === '') throw new UserError('--name must not be empty');
  const tenant = {
    tenantId: uuidOption(opts.id, '--id'),
    organizationId: uuidOption(opts.organizationId, '--organization-id'),
    name,
  };
  await withDatabase(config.databaseUrl, io, async (storage) => {
    if (!(await storage.createTenant(tenant, waitingFor(io))))
      throw new UserError(`a tenant with id '${tenant.tenantId}' already exists`);
  });
  // The id alone on stdout, so `TENANT=$(secinv tenants create --name x)` works.
  io.stdout.write(`${tenant.tenantId}\n`);
  io.stderr.write(`created tenant ${tenant.tenantId} (${name}) in organization ${tenant.organizationId}\n`);
}

export async function tenantsList(config: Readonly<Config>, opts: { json: boolean }, io: Io): Promise<void> {
  const tenants = await withDatabase(config.databaseUrl, io, (storage) => storage.tenantSummaries());
  if (opts.json) {
    io.stdout.write(`${JSON.stringify(tenants, null, 2)}\n`);
    return;
  }
  printTable(
    io,
    ['ID', 'ORGANIZATION', 'NAME', 'ASSETS', 'FINDINGS', 'RISKS', 'KEYS'],
    tenants.map((t) => [
      t.tenantId,
      t.organizationId,
      t.name ?? '-',
      String(t.assets),
      String(t.findings),
      String(t.risks),
      String(t.keys),
    ]),
  );
}

type SlaFlags = Partial<Record<Lowercase<(typeof findingSeverities)[number]>, string>>;

/** `--critical 7 --low none`: the days given per severity, each checked, over `base`. */
export function slaFromFlags(base: Sla, flags: SlaFlags): Sla {
  const sla: Sla = { ...base };
  for (const severity of findingSeverities) {
    const flag = severity.toLowerCase() as keyof SlaFlags;
    const value = flags[flag]?.trim();
    if (value === undefined) continue;
    if (value.toLowerCase() === 'none') {
      delete sla[severity];
      continue;
    }
    const problem = slaDaysProblem(/^-?\d+(\.\d+)?$/.test(value) ? Number(value) : Number.NaN);
    if (problem !== null) throw new UserError(`--${flag} ${problem} (or none), not '${value}'`);
    sla[severity] = Number(value);
  }
  return sla;
}

export async function tenantsSetSla(
  config: Readonly<Config>,
  opts: SlaFlags & { tenant: string; defaults: boolean },
  io: Io,
): Promise<void> {
  await withDatabase(config.databaseUrl, io, async (storage) => {
    const current = await storage.tenantSla(opts.tenant);
    if (current === undefined) throw new UserError(`unknown tenant '${opts.tenant}'`);
    const sla = slaFromFlags(opts.defaults ? DEFAULT_SLA : current, opts);
    const set = await storage.setTenantSla(opts.tenant, sla, new Date().toISOString(), waitingFor(io));
    if (set === undefined) throw new UserError(`unknown tenant '${opts.tenant}'`);
    io.stdout.write(`${JSON.stringify(sla)}\n`);
    io.stderr.write(`set the SLA of tenant ${opts.tenant}: ${set.moved} due dates moved\n`);
  });
}
