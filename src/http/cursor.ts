// Opaque, tamper-evident list cursors. A cursor carries only the position of the last item sent (its sort value and
// its key: a risk's id, a finding's asset and vulnerability ids); it is signed with a per-database key together with what it is bound to (the tenant and the normalised query),
// so an altered cursor, or one replayed with other filters, another sort or projection, or another tenant's key, fails
// verification and is answered 400 invalid_cursor: never a 500, never another tenant's data.
import { apiError } from '../domain/errors.js';
import { sealer } from './sealed.js';

/** The sort value of the last item sent, then its key (one or more strings, the tie-break order). */
export type Position = readonly [sortValue: string | number, ...key: string[]];

const VERSION = 1;

/** The position of a list whose key has one string (risks: the id) or two (findings: asset and vulnerability ids). */
type Decode = {
  (cursor: string, binding: string, keys: 1): readonly [sortValue: string | number, id: string];
  (cursor: string, binding: string, keys: 2): readonly [sortValue: string | number, assetId: string, id: string];
};

const invalid = () =>
  apiError(
    'invalid_cursor',
    'cursor is not valid for this query: pass meta.cursor unchanged, with the same key, filters, sort, fields and include',
    'cursor',
  );

export function cursorCodec(key: Buffer) {
  const tokens = sealer(key);

  return {
    encode: (position: Position, binding: string): string => tokens.seal([VERSION, ...position], binding),

    /** The position in a cursor issued for this binding, with a key of `keys` strings; throws invalid_cursor otherwise. */
    decode: ((cursor: string, binding: string, keys: number): Position => {
      const parsed = tokens.open(cursor, binding);
      if (!parsed || parsed.length < 3 || parsed[0] !== VERSION) throw invalid();
      const [, sortValue, ...key] = parsed;
      if (
        (typeof sortValue !== 'string' && typeof sortValue !== 'number') ||
        key.length !== keys ||
        !key.every((k) => typeof k === 'string')
      )
        throw invalid();
      return [sortValue, ...key];
    }) as Decode,
  };
}

export type CursorCodec = ReturnType<typeof cursorCodec>;

/**
 * Parameters that say how much to send or where to start, not which records in which order: a cursor is not bound to
 * them. perPage may change between batches, a numbered page hands out the cursor of its end, and the total and the
 * format only shape the answer.
 */
const UNBOUND = new Set(['cursor', 'perPage', 'page', 'includeTotal', 'format']);

/**
 * What a cursor is bound to: the list (a route path), the tenant and the query normalised (list items as sets,
 * defaults explicit), without the parameters of UNBOUND.
 */
export function cursorBinding(list: string, tenantId: string, query: Record<string, unknown>): string {
  const normalised = Object.entries(query)
    .filter(([name, value]) => !UNBOUND.has(name) && value !== undefined)
    .map(([name, value]) => [name, Array.isArray(value) ? (value as unknown[]).map(String).sort() : value] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify([list, tenantId, normalised]);
}
