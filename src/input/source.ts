// Opens an input as the bytes of the report: a file or standard input, gzip undone when the content is gzip (told by
// its magic bytes, not its name), UTF-8 without a byte order mark whatever the file's (UTF-16 made UTF-8), with its
// first bytes read ahead for format detection and then replayed. Every reader of a report or feed gets its bytes from
// here, so none of them looks for a byte order mark.
import { createReadStream } from 'node:fs';
import { pipeline, Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { fileErrorReason } from '../domain/errors.js';
import { HEAD_BYTES } from './detect.js';

export interface OpenedReport {
  /** The first bytes (at most HEAD_BYTES, decompressed). */
  head: Buffer;
  /** Whether the head is the whole report. */
  complete: boolean;
  /** Every byte of the report, the head included, decompressed. */
  bytes: AsyncIterable<Buffer>;
}

const GZIP_MAGIC = [0x1f, 0x8b];

/** A chunk as bytes: a stream of strings (a generator's lines, as the demo's import is made of) is read as UTF-8. */
const bytesOf = (chunk: Buffer | string): Buffer => (typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk);

/** Reads the first bytes of a stream; the rest stays unread, to be continued by the same iterator. */
async function peek(
  iterator: AsyncIterator<Buffer | string>,
  size: number,
): Promise<{ chunks: Buffer[]; length: number; ended: boolean }> {
  const chunks: Buffer[] = [];
  let length = 0;
  while (length < size) {
    const next = await iterator.next();
    if (next.done) return { chunks, length, ended: true };
    const chunk = bytesOf(next.value);
    chunks.push(chunk);
    length += chunk.length;
  }
  return { chunks, length, ended: false };
}

async function* replay(
  chunks: Buffer[],
  iterator: AsyncIterator<Buffer | string>,
  ended: boolean,
): AsyncGenerator<Buffer> {
  yield* chunks;
  if (ended) return;
  for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield bytesOf(next.value);
}

const UTF8_MARK = Buffer.from([0xef, 0xbb, 0xbf]);
/** The encoding a byte order mark at the start says, when it says one. */
function markOf(start: Buffer): 'utf-8' | 'utf-16le' | 'utf-16be' | null {
  if (start.subarray(0, 3).equals(UTF8_MARK)) return 'utf-8';
  if (start[0] === 0xff && start[1] === 0xfe) return 'utf-16le';
  if (start[0] === 0xfe && start[1] === 0xff) return 'utf-16be';
  return null;
}

/** UTF-16 bytes as UTF-8, the byte order mark dropped; a character split between chunks is joined. */
async function* toUtf8(bytes: AsyncIterator<Buffer>, encoding: 'utf-16le' | 'utf-16be'): AsyncGenerator<Buffer> {
  const decoder = new TextDecoder(encoding);
  for (let next = await bytes.next(); !next.done; next = await bytes.next()) {
    const text = decoder.decode(next.value, { stream: true });
    if (text !== '') yield Buffer.from(text, 'utf8');
  }
  const rest = decoder.decode();
  if (rest !== '') yield Buffer.from(rest, 'utf8');
}

export async function openReport(open: () => Readable): Promise<OpenedReport> {
  const raw = open();
  const rawIterator = raw[Symbol.asyncIterator]() as AsyncIterator<Buffer | string>;
  const first = await peek(rawIterator, GZIP_MAGIC.length);
  const start = Buffer.concat(first.chunks);
  let iterator = replay(first.chunks, rawIterator, first.ended);
  if (GZIP_MAGIC.every((byte, i) => start[i] === byte)) {
    const gunzip = createGunzip();
    // A corrupt or truncated gzip stream, or a failing source, destroys gunzip: the error reaches the reader.
    pipeline(Readable.from(iterator), gunzip, () => undefined);
    iterator = gunzip[Symbol.asyncIterator]() as AsyncGenerator<Buffer>;
  }
  // A byte order mark: editors and Windows tools write UTF-8's (RFC 8259 lets a JSON parser ignore it), and Windows
  // PowerShell's `>` writes a command's output as UTF-16 with its mark, which is read as UTF-8.
  const mark = await peek(iterator, UTF8_MARK.length);
  const opening = Buffer.concat(mark.chunks);
  const encoding = markOf(opening);
  iterator = replay(encoding === 'utf-8' ? [opening.subarray(UTF8_MARK.length)] : mark.chunks, iterator, mark.ended);
  if (encoding === 'utf-16le' || encoding === 'utf-16be') iterator = toUtf8(iterator, encoding);
  const head = await peek(iterator, HEAD_BYTES);
  const bytes = Buffer.concat(head.chunks);
  return {
    head: bytes.subarray(0, HEAD_BYTES),
    complete: head.ended && bytes.length <= HEAD_BYTES,
    bytes: replay(head.chunks, iterator, head.ended),
  };
}

/** A file path, or `-` for standard input. */
export const openPath =
  (path: string, stdin: Readable = process.stdin) =>
  (): Readable =>
    path === '-' ? stdin : createReadStream(path);

/**
 * What a failed read of an input means to a person: a file that cannot be read, broken gzip; undefined for anything
 * else, which is a bug for the caller to rethrow.
 */
export function readProblem(error: unknown): string | undefined {
  const e = error as NodeJS.ErrnoException;
  if (typeof e.syscall === 'string') return `cannot read: ${fileErrorReason(e)}`;
  if (/^Z_/.test(String(e.code))) return `is not valid gzip: ${e.message}`;
  return undefined;
}
