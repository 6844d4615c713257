// Exports: a list's whole filtered, sorted result as one streamed NDJSON or CSV download (docs/DESIGN.md §27, §36). The
// rows come in keyset batches, each read in a storage call of its own, at most one read ahead of what the response has
// taken: a slow client holds no database connection and makes the server hold a bounded number of batches (the one
// read ahead, the one the stream holds), whatever the size of the result.
import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import Negotiator from 'negotiator';
import { apiError } from '../domain/errors.js';
import type { ExportFormat, ListFormat } from '../domain/query.js';
import { csvItems } from './csv-items.js';
import { ACCEPTED_FORMAT } from './query.js';

/** Rows per storage read of an export: ~1-3 MB of JSON, few enough reads that each costs little beside its rows. */
export const EXPORT_BATCH = 1000;
/** Rows of the first read, which the response waits for: small, so that the download starts at once. */
const FIRST_EXPORT_BATCH = 100;

/** How the list operations describe their exports in the OpenAPI document. */
export const EXPORT_DOC =
  '**Export.** `format=ndjson` or `format=csv` (or `Accept: application/x-ndjson` / `Accept: text/csv`; the parameter ' +
  'wins over Accept) answers every matching record, in the order of the list, as one streamed download with ' +
  '`Content-Disposition: attachment`: the same filters, sort, `fields` and `include` as the pages, the same items. ' +
  'Parameters that shape a page (`page`, `perPage`, `cursor`, `includeTotal`) are `400` with an export. An Accept ' +
  'header that admits none of `application/json`, `application/x-ndjson`, `text/csv` is `406`. An export is one ' +
  'request for the rate limit; it carries an ETag (`304` while the data is unchanged) and is compressed as it streams ' +
  'when `Accept-Encoding` asks. Should the database fail after the download started, the response is cut off ' +
  '(the chunked body lacks its end), never completed.\n\n';

/** The media types of a list, the paged JSON first: it is the answer to `*\/*` and to an absent Accept. */
const MEDIA_TYPES: Record<string, ListFormat> = {
  'application/json': 'json',
  'application/x-ndjson': 'ndjson',
  'text/csv': 'csv',
};

const CONTENT_TYPES: Record<ExportFormat, string> = {
  ndjson: 'application/x-ndjson; charset=utf-8',
  csv: 'text/csv; charset=utf-8; header=present',
};

/**
 * preValidation hook of a list route: the format the Accept header asks for, handed to the query parser (which
 * checks it against page, perPage, cursor and includeTotal with the other parameter rules). The `format` parameter,
 * when given, decides alone. An Accept header that admits none of the list's media types is 406.
 */
export async function negotiateFormat(request: FastifyRequest): Promise<void> {
  const query = request.query as Record<string | symbol, unknown>;
  const accept = request.headers.accept;
  if ('format' in query || accept === undefined || accept.trim() === '') return;
  const [best] = new Negotiator({ headers: { accept } }).mediaTypes(Object.keys(MEDIA_TYPES));
  const format = best === undefined ? undefined : MEDIA_TYPES[best];
  if (format === undefined) {
    throw apiError(
      'not_acceptable',
      `Accept names no media type of this list; it answers ${Object.keys(MEDIA_TYPES).join(', ')} ` +
        '(or use the format parameter: json, ndjson, csv)',
    );
  }
  if (format !== 'json') query[ACCEPTED_FORMAT] = format;
}

/** A list read in keyset batches: `size` items after a position (the first without one), and the next position. */
export type BatchReader<P> = (after: P | undefined, size: number) => Promise<{ items: Buffer[]; next: P | null }>;

/**
 * Every batch of a list. From the second batch on, the next batch is read while the one just read is encoded and sent
 * (on PostgreSQL the database works meanwhile in its own process): at most one read runs ahead of what the response has
 * taken, so a slow client still holds at most one batch more (docs/DESIGN.md §36). The first batch starts no read
 * ahead: a HEAD, or a client that leaves at once, costs one read.
 */
export async function* batchesOf<P>(read: BatchReader<P>): AsyncGenerator<Buffer[]> {
  let { items, next } = await read(undefined, FIRST_EXPORT_BATCH);
  yield items;
  let ahead = next === null ? undefined : read(next, EXPORT_BATCH);
  while (ahead !== undefined) {
    ({ items, next } = await ahead);
    ahead = next === null ? undefined : read(next, EXPORT_BATCH);
    // A read ahead that fails while its batch is not yet wanted fails the export when it is (or never, once the
    // client has gone): not an unhandled rejection meanwhile.
    ahead?.catch(() => undefined);
    yield items;
  }
}

export interface ExportSource {
  /** The start of the file name: `<name>-<yyyy-MM-dd>.<format>`. */
  name: string;
  /** The CSV columns, one per top-level field, in the order of the contract. */
  columns: readonly string[];
  batches: AsyncIterable<Buffer[]>;
}

/** The items, one a line: one buffer of the batch, written once. */
function ndjson(items: readonly Buffer[]): Buffer {
  let size = items.length;
  for (const item of items) size += item.length;
  const out = Buffer.allocUnsafe(size);
  let o = 0;
  for (const item of items) {
    o += item.copy(out, o);
    out[o++] = 0x0a;
  }
  return out;
}

/**
 * The body of an export after its first batch: a byte stream that reads the next batch only when the response has
 * taken the previous one (it holds one chunk beyond a small byte budget, then waits), and stops reading when the
 * response is destroyed (the client went away).
 */
export function exportBody(
  format: ExportFormat,
  columns: readonly string[],
  first: IteratorResult<Buffer[]>,
  rest: AsyncIterator<Buffer[]>,
): Readable {
  const csv = csvItems(columns);
  async function* chunks(): AsyncGenerator<Buffer> {
    try {
      for (let batch = first, index = 0; batch.done !== true; batch = await rest.next(), index += 1) {
        if (format === 'ndjson') yield ndjson(batch.value);
        // A UTF-8 byte order mark before the header, so that spreadsheets read the file as UTF-8.
        else if (index > 0) yield csv.rows(batch.value);
        else yield Buffer.concat([Buffer.from(`\uFEFF${csv.header}`), csv.rows(batch.value)]);
        // The response writes a chunk when the event loop turns (Node.js corks the socket for a tick), and the next
        // batch's read and encoding run in promise callbacks, synchronously on SQLite: without a turn here the first
        // bytes would wait for them (docs/DESIGN.md §36).
        await new Promise((resolve) => setImmediate(resolve));
      }
    } finally {
      await rest.return?.();
    }
  }
  return Readable.from(chunks(), { objectMode: false, highWaterMark: 64 * 1024 });
}

/**
 * Sends a list as a download. The first batch is read before anything is sent, so a failure there (the database is
 * unavailable) is still an ordinary error response; a failure after it cuts the response off, and the client sees a
 * truncated body (chunked transfer without its last chunk), never a complete-looking one.
 */
export async function sendExport(
  request: FastifyRequest,
  reply: FastifyReply,
  format: ExportFormat,
  { name, columns, batches }: ExportSource,
): Promise<FastifyReply> {
  const iterator = batches[Symbol.asyncIterator]();
  const first = await iterator.next();
  reply
    .type(CONTENT_TYPES[format])
    .header('Content-Disposition', `attachment; filename="${name}-${new Date().toISOString().slice(0, 10)}.${format}"`);
  if (request.method === 'HEAD') {
    await iterator.return?.();
    return reply.send(Readable.from([]));
  }
  // A client that goes before the body is first read never starts its generator, whose end would end the batches:
  // they are ended here too (a second return is nothing).
  reply.raw.once('close', () => void iterator.return?.());
  return reply.send(exportBody(format, columns, first, iterator));
}
