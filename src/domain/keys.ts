// Tenant API keys: 32 random bytes behind a fixed prefix that secret scanners can match; only a hash is kept.
import { hash, randomBytes } from 'node:crypto';

export const KEY_PREFIX = 'secinv_';
/** How much of a key listings show, enough to tell keys apart and nothing to guess with. */
const DISPLAY_LENGTH = KEY_PREFIX.length + 6;

// Every request hashes its key: the one-shot digest costs a third of a Hash object's (docs/DESIGN.md §73).
export const hashKey = (key: string): string => hash('sha256', key, 'hex');

export function newKey(): { id: string; key: string; prefix: string; keyHash: string } {
  const key = KEY_PREFIX + randomBytes(32).toString('base64url');
  return {
    id: `key_${randomBytes(8).toString('hex')}`,
    key,
    prefix: key.slice(0, DISPLAY_LENGTH),
    keyHash: hashKey(key),
  };
}

/** The key of an `Authorization: Bearer <key>` header (scheme case-insensitive, spaces around the key ignored). */
export function bearerKey(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const match = /^\s*bearer +(.*)$/i.exec(header);
  const key = match?.[1]?.trim();
  return key ? key : undefined;
}

/** Whether a key may still be used at `at` (ISO time): not revoked, not expired. One rule for requests and links. */
export const keyUsable = (key: { revokedAt: string | null; expiresAt: string | null }, at: string): boolean =>
  key.revokedAt === null && (key.expiresAt === null || key.expiresAt > at);
