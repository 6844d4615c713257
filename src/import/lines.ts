// The lines of an import file, split from its bytes. `readline` decoded every chunk to a string and split it with a
// regular expression, ~4 s of the reading thread's 47 s on the 1M-finding file (docs/DESIGN.md §49); a line break is
// one byte in UTF-8 and never part of another character, so the bytes can be split first and each line decoded alone.

const LF = 0x0a;
const CR = 0x0d;

/**
 * Yields each line without its terminator, as `readline` with `crlfDelay: Infinity` does: `\n`, `\r\n` and a lone
 * `\r` each end a line, and a last line without a terminator is a line; an empty input has none.
 */
export async function* lines(input: AsyncIterable<Buffer | string>): AsyncGenerator<string> {
  let rest: Buffer | null = null;
  // A chunk that ended in `\r`: a `\n` at the start of the next one belongs to it.
  let pendingCr = false;
  for await (const chunk of input) {
    let bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    if (bytes.length === 0) continue;
    if (pendingCr && bytes[0] === LF) bytes = bytes.subarray(1);
    pendingCr = false;
    let start = 0;
    for (;;) {
      const at = bytes.indexOf(LF, start);
      if (at === -1) break;
      let line = rest === null ? bytes.subarray(start, at) : Buffer.concat([rest, bytes.subarray(start, at)]);
      rest = null;
      if (line.length > 0 && line[line.length - 1] === CR) line = line.subarray(0, -1);
      yield* split(line);
      start = at + 1;
    }
    if (start < bytes.length) {
      const tail = bytes.subarray(start);
      rest = rest === null ? Buffer.from(tail) : Buffer.concat([rest, tail]);
      // A lone `\r` at the end of a chunk ends a line, unless a `\n` follows it in the next chunk.
      if (rest[rest.length - 1] === CR) {
        yield* split(rest.subarray(0, -1));
        rest = null;
        pendingCr = true;
      }
    }
  }
  if (rest !== null) yield* split(rest);
}

/** The text of a line that may still hold a lone `\r`, which ends a line too. */
function* split(line: Buffer): Generator<string> {
  if (line.indexOf(CR) === -1) {
    yield line.toString('utf8');
    return;
  }
  let start = 0;
  for (let at = line.indexOf(CR); at !== -1; at = line.indexOf(CR, start)) {
    yield line.toString('utf8', start, at);
    start = at + 1;
  }
  yield line.toString('utf8', start);
}
