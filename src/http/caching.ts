// Conditional GETs for tenant data, answered before the data is read. A body is a function of the tenant's data (its
// data version moves with every write that touches it), the route, the path parameters and the parsed query, and of
// the code that builds it; the ETag is a MAC of exactly those, so it is known in preHandler, and a matching
// If-None-Match is answered 304 without a storage read or a body. Weak tags on 200s only (never on errors or 401s),
// Cache-Control: private so shared caches never keep one tenant's data. Written here rather than with @fastify/etag,
// which hashes the body and also tags error responses. The reasoning: docs/DESIGN.md §25.
import { createHash, createHmac, hash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { keptBodies, negotiateCoding, type Coding, type CompressionOptions } from './compression.js';
import { JSON_TYPE } from './respond.js';
import { CHANGES_CURSOR } from './snapshot.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The ETag of the 200 this request would be answered with; set by the caching preHandler. */
    etag?: string;
    /**
     * Set by a route whose 200 holds something that expires (a signed link): it is neither tagged nor kept, and
     * clients are told not to store it.
     */
    uncached?: boolean;
    /** The coding the client accepts best (negotiated once, in preHandler), or undefined for identity. */
    coding?: Coding | undefined;
    /** Answered with kept bytes, without its handler. */
    fromKept?: boolean;
  }
}

export interface CachingOptions {
  /** A per-database secret (the cursor key): tags differ between databases and reveal nothing of the data version. */
  secret: Buffer;
  /** Changes with the code that builds bodies, so an upgrade invalidates every tag (see serverFingerprint). */
  serverVersion: string;
  compression: CompressionOptions;
  /** The routes whose bodies move with the clock, and the part of their tags that does (src/http/timed.ts). */
  timed?: { urls: ReadonlySet<string>; part: (request: FastifyRequest) => Promise<string> };
}

/** Whether If-None-Match names this tag, by weak comparison (RFC 9110 §13.1.2: W/ prefixes are ignored). */
export const namesTag = (header: string | undefined, etag: string): boolean => {
  if (header === undefined) return false;
  const opaque = etag.replace(/^W\//, '');
  return header.split(',').some((candidate) => candidate.trim().replace(/^W\//, '') === opaque);
};

/**
 * The parsed query with its names in one order: `?a=1&b=2` and `?b=2&a=1` share a tag. Values stay as the parser
 * made them (enums canonical, defaults filled in, list items in the order given): two lists in different orders get
 * different tags, which costs a 200 at worst, whereas sorting would wrongly merge any list whose order mattered.
 */
const normalisedQuery = (query: unknown): [string, unknown][] =>
  Object.entries((query ?? {}) as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

/**
 * The tag of the body a request would get. JSON keeps the parts apart (no separator can be forged by a value), and
 * the MAC makes tags unguessable: a tag cannot be checked against a guessed tenant id or data version. The MAC is a
 * SHA-256 of the key followed by the parts, cut to 132 bits: cut, it shows nothing of the state a length extension
 * would start from, and one digest costs a quarter of an HMAC object per request (docs/DESIGN.md §73).
 */
export function etagOf({ secret, serverVersion }: Pick<CachingOptions, 'secret' | 'serverVersion'>) {
  const key = createHmac('sha256', secret).update('secinv etag').digest('base64url');
  return (request: FastifyRequest, time = ''): string => {
    const parts = [
      serverVersion,
      request.tenant.tenantId,
      request.tenant.dataVersion,
      request.routeOptions.url,
      request.params ?? {},
      normalisedQuery(request.query),
      time,
    ];
    return `W/"${hash('sha256', key + JSON.stringify(parts), 'base64url').slice(0, 22)}"`;
  };
}

/**
 * A digest of the running code (every file under src/ or dist/, where this module was loaded from, and package.json):
 * any change of the code that builds bodies changes it, and processes running the same code agree on it,
 * so several servers of one database share tags. Read once per process.
 */
export const serverFingerprint = (() => {
  let memo: string | undefined;
  const walk = (folder: string, hash: ReturnType<typeof createHash>): void => {
    for (const entry of readdirSync(folder, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) walk(path, hash);
      else if (entry.isFile()) hash.update(`${entry.name}\n`).update(readFileSync(path));
    }
  };
  return (): string => {
    if (memo === undefined) {
      const hash = createHash('sha256').update(readFileSync(new URL('../../package.json', import.meta.url)));
      walk(fileURLToPath(new URL('..', import.meta.url)), hash);
      memo = hash.digest('base64url');
    }
    return memo;
  };
})();

export function registerCaching(api: FastifyInstance, options: CachingOptions): void {
  const tagOf = etagOf(options);
  const bodies = keptBodies(options.compression);
  // After authentication, the rate limit and the query parser (a 401, 429 or 400 is never a 304); before the handler.
  // A tag the client names was sent with a 200 for this same request and data version, so the answer is that 200
  // again. `*` is different: it matches only if there is a body at all (not on a 404), so it waits for the handler.
  // Kept bytes are answered here too: a tag names one body, so a body built (and compressed) once for a tag need not be
  // built again (a dashboard polling one page, a console reloading, a script's curl without --compressed). Only JSON
  // bodies are kept (an export streams).
  api.addHook('preHandler', async (request, reply) => {
    if (request.uncached) return;
    const { timed } = options;
    const url = request.routeOptions.url;
    const etag = tagOf(request, timed && url !== undefined && timed.urls.has(url) ? await timed.part(request) : '');
    request.etag = etag;
    if (namesTag(request.headers['if-none-match'], etag)) {
      reply.header('ETag', etag);
      return reply.code(304).send();
    }
    const coding = negotiateCoding(request.headers);
    request.coding = coding;
    const kept = bodies.kept(etag, coding);
    if (kept !== undefined) {
      request.fromKept = true;
      if (kept.position !== undefined) reply.header(CHANGES_CURSOR, kept.position);
      return reply.code(200).type(JSON_TYPE).send(kept.body);
    }
  });
  api.addHook('onSend', async (request, reply, payload) => {
    reply.header('Cache-Control', request.uncached ? 'no-store' : 'private');
    // Accept: a list answers a page or an export by it (src/http/export.ts).
    reply.header('Vary', 'Authorization, Accept, Accept-Encoding');
    if (reply.statusCode !== 200 || request.etag === undefined) return payload;
    const noneMatchesAny = request.headers['if-none-match']?.trim() === '*';
    // An export is a stream, tagged like any 200 (its format is part of the parsed query, whether a parameter or
    // Accept chose it); @fastify/compress compresses it as it streams, and nothing of it is kept.
    if (payload instanceof Readable) {
      reply.header('ETag', request.etag);
      if (!noneMatchesAny) return payload;
      payload.destroy();
      reply.code(304);
      return '';
    }
    if (!(payload instanceof Buffer)) return payload;
    reply.header('ETag', request.etag);
    if (noneMatchesAny) {
      reply.code(304);
      return '';
    }
    // Compressed here, by tag, so a body sent again is not compressed again; @fastify/compress passes an encoded
    // payload through and still serves everything else (errors, the OpenAPI document).
    const { coding } = request;
    if (request.fromKept) {
      if (coding !== undefined) reply.header('Content-Encoding', coding);
      return payload;
    }
    if (reply.getHeader('content-type') !== JSON_TYPE) return payload;
    const position = reply.getHeader(CHANGES_CURSOR);
    const read = typeof position === 'string' ? position : undefined;
    if (coding === undefined) {
      bodies.keep(request.etag, payload, read);
      return payload;
    }
    if (payload.length < options.compression.threshold) return payload;
    reply.header('Content-Encoding', coding);
    const sent = await bodies.get(request.etag, coding, payload, read);
    // A body of this tag kept before, from another snapshot: its own position goes with it.
    if (sent.position !== undefined) reply.header(CHANGES_CURSOR, sent.position);
    return sent.body;
  });
}
