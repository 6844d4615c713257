// A scanner's report may hold U+0000 in a string (Grype 0.75 wrote a Java version `17.0.10+7\u0000-J-ms8m`), which
// neither the inventory's rules nor PostgreSQL text accept. The import format refuses it (src/input/normalize.ts); a
// scanner's report is kept, each NUL replaced by U+FFFD, and the count said in the summary (docs/INGEST.md, "Reading").
// JSON can only hold the character as the escape `\u0000` (a raw NUL byte makes the file binary, refused in
// detection), and the replacement escape has the same length, so lines and JSON paths stay as the file has them.

/** How many NUL characters were replaced in a report. */
export interface NulCount {
  replaced: number;
}

const ESCAPE = Buffer.from('\\u0000');
const REPLACEMENT = Buffer.from('fffd');
const BACKSLASH = 0x5c;
/** Bytes held back at the end of a chunk: an escape may begin there and end in the next chunk. */
const HELD = ESCAPE.length - 1;

/**
 * The bytes of a JSON document with every `\u0000` escape made `\ufffd`. An escape is one when an even number of
 * backslashes stands before it (`\\u0000` is a backslash, then the text `u0000`), counted across chunks too.
 */
export async function* replacingNulEscapes(bytes: AsyncIterable<Buffer>, count: NulCount): AsyncGenerator<Buffer> {
  let held: Buffer = Buffer.alloc(0);
  // Whether the bytes already given end in an odd run of backslashes.
  let oddBefore = false;
  for await (const chunk of bytes) {
    const buffer = held.length === 0 ? chunk : Buffer.concat([held, chunk]);
    if (buffer.length <= HELD) {
      held = buffer;
      continue;
    }
    let copy: Buffer | null = null;
    for (let at = buffer.indexOf(ESCAPE); at !== -1; at = buffer.indexOf(ESCAPE, at + ESCAPE.length)) {
      let run = 0;
      while (at - run - 1 >= 0 && buffer[at - run - 1] === BACKSLASH) run += 1;
      const odd = (run % 2 === 1) !== (run === at && oddBefore);
      if (odd) continue;
      copy ??= Buffer.from(buffer);
      REPLACEMENT.copy(copy, at + 2);
      count.replaced += 1;
    }
    const out = copy ?? buffer;
    const end = out.length - HELD;
    let run = 0;
    while (run < end && out[end - run - 1] === BACKSLASH) run += 1;
    oddBefore = (run % 2 === 1) !== (run === end && oddBefore);
    held = out.subarray(end);
    yield out.subarray(0, end);
  }
  if (held.length > 0) yield held;
}
