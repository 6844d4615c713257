// Tenant authentication: runs before parameters are looked at (a bad key and bad parameters is a 401).
import type { FastifyRequest } from 'fastify';
import { apiError } from '../domain/errors.js';
import { bearerKey, hashKey, keyUsable } from '../domain/keys.js';
import type { Scope } from '../domain/scopes.js';
import type { Storage, TenantScope } from '../storage/index.js';

declare module 'fastify' {
  interface FastifyRequest {
    tenant: TenantScope;
    /** The id (never the secret) of the key the request authenticated with: the unit of rate limiting. */
    apiKeyId: string;
    /** What that key may do. */
    apiKeyScopes: readonly Scope[];
  }
  interface FastifyContextConfig {
    /** The scopes of which a key needs one for this operation (pipeline.md §1); default `read`. */
    scopes?: readonly Scope[];
  }
}

const READ_ONLY: readonly Scope[] = ['read'];

/** A valid key without the scope the operation needs: 403, after every 401 rule. */
const forbidden = (needs: readonly Scope[]) =>
  apiError(
    'forbidden',
    `this key lacks the ${needs.map((s) => `'${s}'`).join(' or ')} scope this operation needs ` +
      '(secinv keys create --scope)',
  );

/** One answer for every failure, so a caller cannot tell a revoked key from an unknown one. */
const unauthorized = () =>
  apiError('unauthorized', 'a valid API key is required: Authorization: Bearer <key>', undefined, {
    'WWW-Authenticate': 'Bearer',
  });

/** lastUsedAt is informational; writing it at most once a minute per key keeps reads from becoming writes. */
const TOUCH_INTERVAL_MS = 60_000;

export function authenticate(storage: Storage, now: () => Date = () => new Date()) {
  // When this server last wrote or tried to write each key's use. Beside another process's write on SQLite the write
  // is skipped (touchKey is false), and the key's stored lastUsedAt stays old: without this, every request with the key
  // would try again. One entry per key used.
  const tried = new Map<string, number>();
  const due = (last: number | undefined, at: Date) => last === undefined || at.getTime() - last > TOUCH_INTERVAL_MS;
  return async (request: FastifyRequest): Promise<void> => {
    const key = bearerKey(request.headers.authorization);
    if (key === undefined) throw unauthorized();
    const found = await storage.findKeyByHash(hashKey(key));
    const at = now();
    const iso = at.toISOString();
    if (!found || !keyUsable(found, iso)) throw unauthorized();
    const needs = request.routeOptions.config.scopes ?? READ_ONLY;
    if (!needs.some((scope) => found.scopes.includes(scope))) throw forbidden(needs);
    request.tenant = { tenantId: found.tenantId, dataVersion: found.dataVersion };
    request.apiKeyId = found.keyId;
    request.apiKeyScopes = found.scopes;
    const stored = found.lastUsedAt === null ? undefined : Date.parse(found.lastUsedAt);
    if (due(stored, at) && due(tried.get(found.keyId), at)) {
      tried.set(found.keyId, at.getTime());
      storage.touchKey(found.keyId, iso).then(
        (recorded) => {
          if (!recorded) request.log.debug('key use not recorded: another process is writing the database');
        },
        (error: unknown) => request.log.warn({ err: error }, 'could not record key use'),
      );
    }
  };
}
