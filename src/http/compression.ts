// Compression of tenant 200s, with the bodies kept by ETag, compressed or not: a tag names one body
// (src/http/caching.ts), so the bytes of a tag can be sent again without building or compressing it again. Levels and
// the cache size were chosen by measurement (docs/DESIGN.md §25, §65, docs/BENCHMARKS.md "Per-request overhead").
import type { IncomingHttpHeaders } from 'node:http';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';

export type Coding = 'br' | 'gzip';

export interface CompressionOptions {
  /** Bodies shorter than this are sent as they are. */
  threshold: number;
  gzipLevel: number;
  brotliQuality: number;
  /** Bytes of bodies kept, compressed or not, over all entries; 0 keeps none. */
  cacheBytes: number;
}

/** Preference on equal quality values: brotli is smaller and, at the qualities used, cheaper than gzip. */
const CODINGS: readonly Coding[] = ['br', 'gzip'];

/**
 * The coding to send for an Accept-Encoding header (RFC 9110 §12.5.3), or undefined for identity: the acceptable coding
 * with the highest q, brotli first on a tie; `*` stands for every coding not named; `x-gzip` is gzip; q=0 refuses.
 */
export function negotiateCoding(headers: IncomingHttpHeaders): Coding | undefined {
  const header = headers['accept-encoding'];
  if (header === undefined || header === '') return undefined;
  const quality = new Map<string, number>();
  for (const item of header.toLowerCase().split(',')) {
    const [name = '', ...params] = item.split(';').map((part) => part.trim());
    const q = params.find((p) => p.startsWith('q='));
    const value = q === undefined ? 1 : Number(q.slice(2));
    quality.set(name === 'x-gzip' ? 'gzip' : name, Number.isFinite(value) ? value : 0);
  }
  let best: Coding | undefined;
  let bestQ = 0;
  for (const coding of CODINGS) {
    const q = quality.get(coding) ?? quality.get('*') ?? 0;
    if (q > bestQ) [best, bestQ] = [coding, q];
  }
  return best;
}

const gzipAsync = promisify(gzip);
const brotliAsync = promisify(brotliCompress);

/**
 * A kept body and the one header that belongs to it rather than to its tag: the change-log position of the snapshot it
 * was read from (src/http/snapshot.ts), which two bodies of one tag, read a write apart, may differ in.
 */
export interface Kept {
  body: Buffer;
  position: string | undefined;
}

/**
 * Bodies by (coding, tag), uncompressed ones under `identity`, least recently used first out, bounded in bytes. A body
 * larger than an eighth of the budget is sent but not kept, so one export-sized page cannot empty the cache of everyday
 * pages.
 */
export function keptBodies({ gzipLevel, brotliQuality, cacheBytes }: CompressionOptions) {
  const entries = new Map<string, Kept>();
  let bytes = 0;
  const compress = (coding: Coding, body: Buffer): Promise<Buffer> =>
    coding === 'gzip'
      ? gzipAsync(body, { level: gzipLevel })
      : brotliAsync(body, {
          params: { [constants.BROTLI_PARAM_QUALITY]: brotliQuality, [constants.BROTLI_PARAM_SIZE_HINT]: body.length },
        });

  /** The kept bytes of a tag in a coding, marked as the most recently used. */
  const peek = (key: string): Kept | undefined => {
    const kept = entries.get(key);
    if (kept !== undefined) {
      entries.delete(key);
      entries.set(key, kept);
    }
    return kept;
  };

  const keep = (key: string, body: Buffer, position: string | undefined): void => {
    // Another request for the same tag may have kept it while this one was compressing.
    if (entries.has(key) || body.length > cacheBytes / 8) return;
    // A body under 4 KiB usually lies in one of Node's shared 8 KiB slabs, which keeping it would hold whole: kept in a
    // memory of its own, the budget counts what is really held.
    const own = body.byteLength === body.buffer.byteLength ? body : Buffer.from(new Uint8Array(body).buffer);
    entries.set(key, { body: own, position });
    bytes += body.length;
    for (const [oldest, value] of entries) {
      if (bytes <= cacheBytes) break;
      entries.delete(oldest);
      bytes -= value.body.length;
    }
  };
  const keyOf = (etag: string, coding: Coding | undefined) => `${coding ?? 'identity'} ${etag}`;

  return {
    /** The kept bytes of a tag in a coding (undefined: identity), if any: the request is answered without its body. */
    kept: (etag: string, coding: Coding | undefined): Kept | undefined => peek(keyOf(etag, coding)),

    /** Keeps a body as it is sent without compression. */
    keep: (etag: string, body: Buffer, position: string | undefined): void =>
      keep(keyOf(etag, undefined), body, position),

    /**
     * The body compressed in a coding, compressed now and kept unless it was kept already (then with the position it
     * was kept with, which the answer must carry).
     */
    async get(etag: string, coding: Coding, body: Buffer, position: string | undefined): Promise<Kept> {
      const key = keyOf(etag, coding);
      const kept = peek(key);
      if (kept !== undefined) return kept;
      const compressed = await compress(coding, body);
      keep(key, compressed, position);
      return { body: compressed, position };
    },
  };
}
