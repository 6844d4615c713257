import type { Config } from '../config.js';
import { UserError } from '../domain/errors.js';
import { newKey } from '../domain/keys.js';
import { DEFAULT_SCOPES, parseScopes, scopesText, type Scope } from '../domain/scopes.js';
import type { Storage, WaitReason } from '../storage/index.js';
import { waitingFor, withDatabase, type Io } from './io.js';
import { printTable } from './table.js';

/** Creates a key for a tenant in the store and returns it; the key exists nowhere else afterwards. */
export async function createTenantKey(
  storage: Storage,
  tenantId: string,
  name: string | null,
  expiresInDays?: number,
  onWait?: (reason: WaitReason) => void,
  scopes: readonly Scope[] = DEFAULT_SCOPES,
): Promise<{ id: string; key: string; expiresAt: string | null }> {
  if ((await storage.tenantOrganization(tenantId)) === undefined)
    throw new UserError(`unknown tenant '${tenantId}' (import it first)`);
  const key = newKey();
  const now = Date.now();
  const expiresAt = expiresInDays === undefined ? null : new Date(now + expiresInDays * 86_400_000).toISOString();
  await storage.insertKey(
    {
      id: key.id,
      tenantId,
      name,
      prefix: key.prefix,
      keyHash: key.keyHash,
      createdAt: new Date(now).toISOString(),
      expiresAt,
      scopes,
    },
    onWait,
  );
  return { id: key.id, key: key.key, expiresAt };
}

export async function keysCreate(
  config: Readonly<Config>,
  opts: { tenant: string; name?: string; expiresIn?: number; scope: string },
  io: Io,
): Promise<void> {
  const parsed = parseScopes(opts.scope);
  if ('problem' in parsed) throw new UserError(`--scope: ${parsed.problem}`);
  await withDatabase(config.databaseUrl, io, async (storage) => {
    const created = await createTenantKey(
      storage,
      opts.tenant,
      opts.name ?? null,
      opts.expiresIn,
      waitingFor(io),
      parsed.scopes,
    );
    // The key alone on stdout, so `KEY=$(secinv keys create --tenant T)` works; the rest is for people.
    io.stdout.write(`${created.key}\n`);
    io.stderr.write(
      `created key ${created.id} (${scopesText(parsed.scopes)}) for tenant ${opts.tenant}${created.expiresAt ? `, expires ${created.expiresAt}` : ''}; it is shown only once\n`,
    );
  });
}

export async function keysList(
  config: Readonly<Config>,
  opts: { tenant: string; json: boolean },
  io: Io,
): Promise<void> {
  await withDatabase(config.databaseUrl, io, async (storage) => {
    const keys = await storage.listKeys(opts.tenant);
    if (opts.json) {
      io.stdout.write(`${JSON.stringify(keys, null, 2)}\n`);
      return;
    }
    const header = ['ID', 'NAME', 'PREFIX', 'SCOPES', 'CREATED', 'EXPIRES', 'REVOKED', 'LAST USED'];
    const rows = keys.map((k) => [
      k.id,
      k.name ?? '-',
      k.prefix,
      scopesText(k.scopes),
      k.createdAt,
      k.expiresAt ?? '-',
      k.revokedAt ?? '-',
      k.lastUsedAt ?? '-',
    ]);
    printTable(io, header, rows);
  });
}

export async function keysRevoke(config: Readonly<Config>, keyId: string, io: Io): Promise<void> {
  await withDatabase(config.databaseUrl, io, async (storage) => {
    if (!(await storage.revokeKey(keyId, new Date().toISOString(), waitingFor(io))))
      throw new UserError(`no key with id '${keyId}'`);
    io.stderr.write(`revoked key ${keyId}\n`);
  });
}
