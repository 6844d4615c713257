// Signed, expiring download tokens (the SBOM URL of extensions.md §3, a presigned URL on this server). A token names
// the tenant, the asset, the key that asked for it and its expiry, and is sealed with a key derived from the server's
// per-database secret (so every process accepts every other's, and a cursor can never pass for a token). Fetching it
// needs no Authorization header; an altered or expired token is 403, and so is one whose key was revoked since: a
// revoked key stops its links at once, as it stops its requests.
import { createHmac } from 'node:crypto';
import { apiError } from '../domain/errors.js';
import { sealer } from './sealed.js';

export interface DownloadGrant {
  tenantId: string;
  assetId: string;
  keyId: string;
  /** Seconds since the epoch after which the token is refused. */
  expiresAt: number;
}

const VERSION = 1;

export const forbidden = (why: string) => apiError('forbidden', `this download link ${why}: ask for a new one`);

export function downloadTokens(secret: Buffer) {
  // Domain separation: a key of its own, derived from the server secret, for this one use.
  const tokens = sealer(createHmac('sha256', secret).update('secinv download token v1').digest());

  return {
    sign: (grant: DownloadGrant): string =>
      tokens.seal([VERSION, grant.tenantId, grant.assetId, grant.keyId, grant.expiresAt]),

    /** The grant of a token signed here and not expired at `nowSeconds`; throws 403 forbidden otherwise. */
    verify(token: string, nowSeconds: number): DownloadGrant {
      const parsed = tokens.open(token);
      if (!parsed || parsed.length !== 5 || parsed[0] !== VERSION) throw forbidden('is not valid');
      const [, tenantId, assetId, keyId, expiresAt] = parsed;
      if (
        typeof tenantId !== 'string' ||
        typeof assetId !== 'string' ||
        typeof keyId !== 'string' ||
        typeof expiresAt !== 'number'
      )
        throw forbidden('is not valid');
      if (nowSeconds >= expiresAt) throw forbidden('has expired');
      return { tenantId, assetId, keyId, expiresAt };
    },
  };
}

export type DownloadTokens = ReturnType<typeof downloadTokens>;

/** A URL as logs may show it: the token of a download link replaced. */
export const redactTokens = (url: string): string => url.replace(/^\/v1\/sbom\/[^?#]*/, '/v1/sbom/<token>');
