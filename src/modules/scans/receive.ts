// An upload's body as the scan stores it (pipeline.md §2): never parsed here, streamed through with its size bounded
// and its digest taken. A `Content-Encoding` (gzip, deflate, br) arrives decoded by @fastify/compress, which every
// route of the app has (a gzip file sent as `application/gzip` is kept as it is: the ingest reads .gz files itself). Every refusal is made before the first byte is stored, or stops the
// stream, which leaves nothing stored.
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import { apiError } from '../../domain/errors.js';

const BODY_TYPES = ['application/json', 'application/gzip', 'application/octet-stream'];

export interface Received {
  bytes: AsyncIterable<Buffer>;
  /** The size and SHA-256 (hex) of the bytes, once they have all been read. */
  measured(): { sizeBytes: number; sha256: string };
}

const tooLarge = (maxBytes: number) =>
  apiError('payload_too_large', `the report is larger than ${maxBytes} bytes (SECINV_SCAN_MAX_BYTES)`);

/** Checks what the headers say, before anything is read. */
export function checkUploadHeaders(request: FastifyRequest, maxBytes: number): void {
  const type = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (!BODY_TYPES.includes(type))
    throw apiError(
      'unsupported_media_type',
      `Content-Type must be one of ${BODY_TYPES.join(', ')}, not '${type || 'none'}': send the report's bytes as they are`,
    );
  const encoding = (request.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  if (!['identity', 'gzip', 'deflate', 'br'].includes(encoding))
    throw apiError('unsupported_media_type', `Content-Encoding must be gzip, deflate, br or none, not '${encoding}'`);
  const length = Number(request.headers['content-length']);
  // An encoded body is bounded by what it decodes to; the length bounds only what is sent as it is.
  if (encoding === 'identity' && Number.isFinite(length) && length > maxBytes) throw tooLarge(maxBytes);
}

export function receive(request: FastifyRequest, maxBytes: number): Received {
  const raw = request.body as Readable;
  const hash = createHash('sha256');
  let size = 0;
  let digest: string | undefined;
  async function* bytes(): AsyncGenerator<Buffer> {
    try {
      for await (const chunk of raw as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > maxBytes) throw tooLarge(maxBytes);
        hash.update(chunk);
        yield chunk;
      }
    } catch (error) {
      if ((error as { code?: unknown }).code === 'Z_DATA_ERROR' || (error as { errno?: unknown }).errno === -3)
        throw apiError(
          'invalid_parameter',
          `the body does not decode as its Content-Encoding says: ${(error as Error).message}`,
        );
      throw error;
    }
    digest = hash.digest('hex');
  }
  return {
    bytes: bytes(),
    measured: () => {
      if (digest === undefined) throw new Error('the body was not read to its end');
      return { sizeBytes: size, sha256: digest };
    },
  };
}
