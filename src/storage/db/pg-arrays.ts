// One-dimensional PostgreSQL arrays in the binary format of array_recv, for `insert … select * from unnest($1, $2, …)`:
// node-postgres sends a Buffer parameter as binary, so a column of a batch travels as one parameter the server reads
// without parsing text. Its own array literals (`{"…","…"}`) escape every quote and backslash of every value on the
// client and unescape them on the server; a batch of findings' documents as hex-escaped `bytea` literals took 2.6× as
// long as the multi-row VALUES they replaced (docs/DESIGN.md §54).
//
// The format (array_recv, in backend/utils/adt/arrayfuncs.c of PostgreSQL's source): int32 dimensions (1), int32 flags
// (1 if any element is null), uint32 element type OID, per dimension int32 length and int32 lower bound (1), then per
// element an int32 byte length (-1 for null) and the element's binary form (text and bytea: the bytes; integers and
// floats: big-endian).

/** The column types the tables use, by `format_type`, and the OIDs of their elements. */
const ELEMENTS = {
  text: 25,
  bytea: 17,
  integer: 23,
  bigint: 20,
  'double precision': 701,
} as const;

export type ColumnType = keyof typeof ELEMENTS;

export const isColumnType = (type: string): type is ColumnType => Object.hasOwn(ELEMENTS, type);

const FIXED = { integer: 4, bigint: 8, 'double precision': 8 } as const;

/** A value as the column holds it: a string or bytes (any Uint8Array, a Buffer or one from another thread) for text and
 * bytea, a number or bigint; null for SQL NULL. */
function normalised(type: ColumnType, value: unknown, column: string): string | Uint8Array | number | bigint | null {
  if (value === null || value === undefined) return null;
  switch (type) {
    case 'text':
      if (typeof value === 'string') return value;
      if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') return String(value);
      break;
    case 'bytea':
      if (value instanceof Uint8Array || typeof value === 'string') return value;
      break;
    case 'integer': {
      const n = typeof value === 'boolean' ? Number(value) : value;
      if (typeof n === 'number' && Number.isInteger(n) && n >= -2147483648 && n <= 2147483647) return n;
      break;
    }
    case 'bigint':
      if (typeof value === 'bigint') return value;
      if (typeof value === 'number' && Number.isSafeInteger(value)) return BigInt(value);
      break;
    case 'double precision':
      if (typeof value === 'number') return value;
      break;
  }
  throw new TypeError(`column ${column} (${type}) cannot hold a value of type ${typeof value}`);
}

/** A one-dimensional array of `values` as a column of `type`, in array_recv's binary format. */
export function binaryArray(type: ColumnType, values: readonly unknown[], column: string): Buffer {
  const items = values.map((value) => normalised(type, value, column));
  const fixed = type in FIXED ? FIXED[type as keyof typeof FIXED] : undefined;
  // Strings are measured, then written in place: no Buffer per element.
  const lengths = items.map((item) =>
    item === null ? -1 : (fixed ?? (typeof item === 'string' ? Buffer.byteLength(item) : (item as Uint8Array).length)),
  );
  let size = 20;
  let nulls = 0;
  for (const length of lengths) {
    size += 4 + Math.max(length, 0);
    if (length < 0) nulls = 1;
  }
  const out = Buffer.allocUnsafe(size);
  let at = out.writeInt32BE(1, 0);
  at = out.writeInt32BE(nulls, at);
  at = out.writeUInt32BE(ELEMENTS[type], at);
  at = out.writeInt32BE(items.length, at);
  at = out.writeInt32BE(1, at);
  items.forEach((item, i) => {
    at = out.writeInt32BE(lengths[i] as number, at);
    if (item === null) return;
    if (typeof item === 'string') at += out.write(item, at, 'utf8');
    else if (item instanceof Uint8Array) {
      out.set(item, at);
      at += item.length;
    } else if (typeof item === 'bigint') at = out.writeBigInt64BE(item, at);
    else if (type === 'integer') at = out.writeInt32BE(item, at);
    else at = out.writeDoubleBE(item, at);
  });
  return out;
}
