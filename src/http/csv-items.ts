// The CSV rows of an export, written from the bytes of its stored JSON items (docs/DESIGN.md §36). Parsing each item
// and writing its cells from the objects cost ~25 µs a finding, half of it doubling the quotes of the nested JSON with
// replaceAll; a scan of the bytes finds each top-level field, and the cell is its bytes: a string's text, an object's
// or an array's JSON (quotes doubled as they are copied), a number's or a boolean's JSON. That holds because every
// stored document is JSON.stringify's output (compact, escaped as it escapes, each key once), so the JSON text of a
// nested value is what JSON.stringify of the parsed value writes again; the rows are those of csvRow (csv.ts) over the
// parsed items, which the unit tests compare byte for byte. A string holding an escape is parsed and written as csvRow
// writes it; an item the scan does not follow is parsed whole.
import { csvRow, textCell } from './csv.js';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const APOSTROPHE = 0x27;
const CR = 0x0d;
const LF = 0x0a;

/** What a field's value is, as far as its cell is concerned. */
const ABSENT = 0; // and null: an empty cell
const TEXT = 1; // a string without escapes: its bytes
const TEXT_WITH_COMMA = 2; // …that holds a comma: quoted
const ESCAPED = 3; // a string holding an escape: parsed
const NESTED = 4; // an object or array: its JSON, quoted (quotes doubled) when it holds a quote or a comma
const NESTED_PLAIN = 5; // …holding neither ([], {}, [null]): as is
const LITERAL = 6; // true or false: as is
const NUMBER = 7; // as String(JSON.parse) writes it

/** A string whose text starts like a formula: = + - @ (tab and CR cannot start an unescaped JSON string). */
const formulaStart = (byte: number): boolean => byte === 0x3d || byte === 0x2b || byte === 0x2d || byte === 0x40;

export interface CsvItems {
  /** The header row (without the byte order mark). */
  header: string;
  /** The rows of a batch of items. */
  rows: (items: readonly Buffer[]) => Buffer;
}

/** The CSV writer of one export's columns: compiled once, used for every batch. */
export function csvItems(columns: readonly string[]): CsvItems {
  const count = columns.length;
  const names = columns.map((column) => Buffer.from(column));
  const slotOf = new Map(columns.map((column, slot) => [column, slot]));
  // Columns by a hash of the key's bytes, computed while its end is sought: no string is made for a key.
  const byHash = new Map<number, number[]>();
  names.forEach((name, slot) => {
    const hash = hashOf(name, 0, name.length);
    byHash.set(hash, [...(byHash.get(hash) ?? []), slot]);
  });
  const kinds = new Uint8Array(count);
  const starts = new Int32Array(count);
  const ends = new Int32Array(count);

  const slotOfKey = (item: Buffer, start: number, end: number, hash: number): number | undefined => {
    for (const slot of byHash.get(hash) ?? []) if (sameBytes(item, start, end, names[slot]!)) return slot;
    return undefined;
  };

  /** What the string stringEnd last went through holds: TEXT, TEXT_WITH_COMMA or ESCAPED. */
  let holds = TEXT;
  /** Where the JSON string whose opening quote is at `open` closes (-1: the item ends first). */
  const stringEnd = (item: Buffer, open: number): number => {
    holds = TEXT;
    for (let i = open + 1; i < item.length; i += 1) {
      const byte = item[i]!;
      if (byte === QUOTE) return i;
      if (byte === BACKSLASH) {
        holds = ESCAPED;
        i += 1;
      } else if (byte === COMMA && holds === TEXT) holds = TEXT_WITH_COMMA;
    }
    return -1;
  };

  /** Finds the fields of one item (kinds, starts, ends by column); false when the item is not a JSON object as scanned. */
  function scan(item: Buffer): boolean {
    kinds.fill(ABSENT);
    const length = item.length;
    if (length < 2 || item[0] !== OPEN_BRACE) return false;
    let i = 1;
    if (item[i] === CLOSE_BRACE) return length === 2;
    for (;;) {
      if (item[i] !== QUOTE) return false;
      // The key: its column, found by its bytes unless it holds an escape.
      const keyStart = i + 1;
      const keyEnd = stringEnd(item, i);
      if (keyEnd < 0 || keyEnd + 2 >= length || item[keyEnd + 1] !== COLON) return false;
      const slot =
        holds === ESCAPED
          ? slotOf.get(JSON.parse(item.toString('utf8', keyStart - 1, keyEnd + 1)) as string)
          : slotOfKey(item, keyStart, keyEnd, hashOf(item, keyStart, keyEnd));
      const start = keyEnd + 2;
      const first = item[start];
      let kind: number;
      if (first === QUOTE) {
        i = stringEnd(item, start);
        if (i < 0) return false;
        kind = holds;
        i += 1;
      } else if (first === OPEN_BRACE || first === OPEN_BRACKET) {
        kind = NESTED_PLAIN;
        let depth = 0;
        let inString = false;
        for (i = start; ; i += 1) {
          if (i >= length) return false;
          const byte = item[i]!;
          if (inString) {
            if (byte === QUOTE) inString = false;
            else if (byte === BACKSLASH) i += 1;
          } else if (byte === QUOTE) {
            inString = true;
            kind = NESTED;
          } else if (byte === COMMA) kind = NESTED;
          // Whitespace: not JSON.stringify's (compact) output, whose nested text the cell copies; parsed instead.
          else if (byte <= 0x20) return false;
          else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) depth += 1;
          else if ((byte === CLOSE_BRACE || byte === CLOSE_BRACKET) && --depth === 0) break;
        }
        i += 1;
      } else {
        for (i = start; i < length && item[i] !== COMMA && item[i] !== CLOSE_BRACE; i += 1);
        if (i === start) return false;
        kind = literalKind(item, start, i);
      }
      if (slot !== undefined) {
        kinds[slot] = kind;
        starts[slot] = start;
        ends[slot] = i;
      }
      if (i >= length) return false;
      if (item[i] === CLOSE_BRACE) return i === length - 1;
      if (item[i] !== COMMA || i + 1 >= length) return false;
      i += 1;
    }
  }

  return {
    header: csvRow(columns),
    rows(items) {
      let size = 0;
      for (const item of items) size += item.length;
      // Most rows are shorter than their item; a batch whose rows outgrow this gets a larger buffer.
      let out = Buffer.allocUnsafe(size + (size >> 2) + items.length * (3 * count + 2));
      let o = 0;
      const room = (bytes: number) => {
        if (o + bytes <= out.length) return;
        const larger = Buffer.allocUnsafe(Math.max(out.length * 2, o + bytes));
        out.copy(larger, 0, 0, o);
        out = larger;
      };
      for (const item of items) {
        if (!scan(item)) {
          const record = JSON.parse(item.toString('utf8')) as Record<string, unknown>;
          const row = csvRow(columns.map((column) => record[column]));
          room(Buffer.byteLength(row));
          o += out.write(row, o);
          continue;
        }
        // A cell is at most its JSON with every byte a doubled quote, two quotes around it and a ' before it.
        room(2 * item.length + 4 * count + 2);
        for (let slot = 0; slot < count; slot += 1) {
          if (slot > 0) out[o++] = COMMA;
          const kind = kinds[slot];
          if (kind === ABSENT) continue;
          const start = starts[slot]!;
          const end = ends[slot]!;
          if (kind === TEXT || kind === TEXT_WITH_COMMA) {
            if (kind === TEXT_WITH_COMMA) out[o++] = QUOTE;
            if (end - start > 2 && formulaStart(item[start + 1]!)) out[o++] = APOSTROPHE;
            // Short texts are copied here: Buffer#copy costs more than their bytes.
            if (end - start > 64) o += item.copy(out, o, start + 1, end - 1);
            else for (let i = start + 1; i < end - 1; i += 1) out[o++] = item[i]!;
            if (kind === TEXT_WITH_COMMA) out[o++] = QUOTE;
          } else if (kind === NESTED) {
            out[o++] = QUOTE;
            for (let i = start; i < end; i += 1) {
              const byte = item[i]!;
              out[o++] = byte;
              if (byte === QUOTE) out[o++] = QUOTE;
            }
            out[o++] = QUOTE;
          } else if (kind === NESTED_PLAIN || kind === LITERAL) o += item.copy(out, o, start, end);
          else if (kind === ESCAPED)
            o += out.write(textCell(JSON.parse(item.toString('utf8', start, end)) as string), o);
          else o += out.write(String(JSON.parse(item.toString('latin1', start, end))), o);
        }
        out[o++] = CR;
        out[o++] = LF;
      }
      return out.subarray(0, o);
    },
  };
}

function hashOf(bytes: Buffer, start: number, end: number): number {
  let hash = 0;
  for (let i = start; i < end; i += 1) hash = (Math.imul(hash, 31) + bytes[i]!) | 0;
  return hash;
}

function sameBytes(item: Buffer, start: number, end: number, name: Buffer): boolean {
  if (end - start !== name.length) return false;
  for (let i = 0; i < name.length; i += 1) if (item[start + i] !== name[i]) return false;
  return true;
}

const NULL = Buffer.from('null');
const TRUE = Buffer.from('true');
const FALSE = Buffer.from('false');

/** null, true, false, or else a number (written as String(JSON.parse(…)), which refuses anything else). */
function literalKind(item: Buffer, start: number, end: number): number {
  if (sameBytes(item, start, end, NULL)) return ABSENT;
  return sameBytes(item, start, end, TRUE) || sameBytes(item, start, end, FALSE) ? LITERAL : NUMBER;
}
