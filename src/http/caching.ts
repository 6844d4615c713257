// Conditional GETs for tenant data: a weak ETag on every 200 (weak because the same entity may be sent compressed or
// not), 304 on a matching If-None-Match, and Cache-Control: private so shared caches never keep one tenant's data.
// Written here rather than with @fastify/etag, which also tags error responses and could answer a 401 with a 304.
import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';

const matches = (header: string | undefined, etag: string): boolean => {
  if (header === undefined) return false;
  if (header.trim() === '*') return true;
  // Weak comparison (RFC 9110 §13.1.2): W/ prefixes are ignored.
  const opaque = etag.replace(/^W\//, '');
  return header.split(',').some((candidate) => candidate.trim().replace(/^W\//, '') === opaque);
};

export function registerCaching(api: FastifyInstance): void {
  api.addHook('onSend', async (request, reply, payload) => {
    reply.header('Cache-Control', 'private');
    reply.header('Vary', 'Authorization, Accept-Encoding');
    if (reply.statusCode !== 200 || !(payload instanceof Buffer || typeof payload === 'string')) return payload;
    const etag = `W/"${createHash('sha1').update(payload).digest('base64url')}"`;
    reply.header('ETag', etag);
    if (matches(request.headers['if-none-match'], etag)) {
      reply.code(304);
      return '';
    }
    return payload;
  });
}
