// Signed JSON tokens: `base64url(JSON).base64url(HMAC-SHA-256/128)`, the one format of list cursors and download links.
// The MAC covers what the token is bound to (a cursor's tenant and query) besides its body, so a token replayed
// elsewhere fails like an altered one.
import { createHmac, timingSafeEqual } from 'node:crypto';

const MAC_BYTES = 16;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

export function sealer(key: Buffer) {
  const mac = (binding: string, body: string) =>
    createHmac('sha256', key).update(binding).update('\n').update(body).digest().subarray(0, MAC_BYTES);

  return {
    seal(values: readonly unknown[], binding = ''): string {
      const body = Buffer.from(JSON.stringify(values)).toString('base64url');
      return `${body}.${mac(binding, body).toString('base64url')}`;
    },

    /** The values of a token sealed here for this binding; undefined for anything else. */
    open(token: string, binding = ''): unknown[] | undefined {
      const [body, signature, extra] = token.split('.');
      // Strict alphabet: base64url decoding would otherwise ignore stray characters, and an altered token could pass.
      if (!body || !signature || extra !== undefined || !BASE64URL.test(body) || !BASE64URL.test(signature))
        return undefined;
      const given = Buffer.from(signature, 'base64url');
      const expected = mac(binding, body);
      // The canonical-encoding check rejects a last character whose unused low bits were changed.
      if (
        given.length !== expected.length ||
        !timingSafeEqual(given, expected) ||
        given.toString('base64url') !== signature
      )
        return undefined;
      try {
        const parsed: unknown = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
        return Array.isArray(parsed) ? parsed : undefined;
      } catch {
        return undefined;
      }
    },
  };
}
