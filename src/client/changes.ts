// The change log in the typed client (pipeline.md §4, docs/DESIGN.md §102): one batch, every change up to the end of
// the log, and a follower that polls for ever. Both walks are async generators that also hold their position, so a
// consumer (a SIEM connector) stores it and starts again from it: `cursor` as the walk stands, `onCursor` once every
// change of a batch has been handled.
import type { Static } from 'typebox';
import type { Asset } from '../domain/assets.js';
import type { QueryInput } from '../domain/query.js';
import type { Risk } from '../domain/risks.js';
import type { Vulnerability } from '../domain/vulnerabilities.js';
import type {
  Change as ChangeSchema,
  ListChangesResponse,
  listChangesSpec,
  scanChangesSpec,
} from '../modules/changes/schemas.js';
import { pause, type RawQuery, type Transport } from './transport.js';

/** One change of the tenant's log: what happened to which record, why, and the record as served. */
export type Change = Omit<Static<typeof ChangeSchema>, 'record'> & { record: Asset | Vulnerability | Risk | null };
/** `cursor` is never null: the position after the batch; an empty `data` means the log is read to its end. */
export type ChangeMeta = Static<typeof ListChangesResponse>['meta'];

export type ChangeListParams = Omit<QueryInput<typeof listChangesSpec.params>, 'format'>;
export type ScanChangesParams = QueryInput<typeof scanChangesSpec.params>;

export interface ChangeReadOptions {
  /** Ends the walk when it aborts: at once, even in the middle of a request or of a wait; the loop just ends. */
  signal?: AbortSignal;
  /**
   * Called, and awaited, with the position after a batch once the consumer has handled every change of it (it asked
   * for the next): the place to store the position. Not called again while the position stays where it is.
   */
  onCursor?: (cursor: string) => void | Promise<void>;
}

/** Every change from `cursor` (the start of the log without one) to its end, with the filters. */
export type ChangeAllParams = ChangeListParams & ChangeReadOptions;

export type ChangeFollowOptions = Omit<ChangeListParams, 'cursor'> &
  ChangeReadOptions & {
    /** Between two looks once the log is read to its end (a batch less than full). Default 5000 ms. */
    intervalMs?: number;
  };

/**
 * Changes as they are read, and where the walk stands. `cursor` (undefined until the first batch arrived) moves at the
 * end of a batch, as its last change is yielded: read after handling a change, or after the loop, it is a position to
 * start again from that misses nothing and repeats at most the changes of the batch under way (compare `seq`).
 */
export interface ChangeFeed extends AsyncGenerator<Change, void, undefined> {
  readonly cursor: string | undefined;
}

export const CHANGES_PATH = '/v1/tenant/changes';
const DEFAULT_INTERVAL_MS = 5000;
/** The largest batch: the fewest requests to catch up. */
const MAX_PER_PAGE = 1000;

export interface ChangesApi {
  /** One batch; store `meta.cursor` and ask again with it (and the same filters). */
  list(params?: ChangeListParams): Promise<{ data: Change[]; meta: ChangeMeta }>;
  /** Every change from `params.cursor` until the log is read to its end (a batch with no change). */
  all(params?: ChangeAllParams): ChangeFeed;
  /**
   * Every change from `cursor` on, for ever: a full batch is followed at once, else the next look is `intervalMs` later.
   * It ends when `signal` aborts or the consumer stops (`break`, `return()`), leaving no timer behind. A cursor past the
   * retention throws SecinvApiError with code `gone`: read the inventory again (an export gives a new cursor in
   * `changesCursor`) and follow from there. Any other error ends it too: start again from `cursor`.
   */
  follow(cursor?: string, options?: ChangeFollowOptions): ChangeFeed;
}

/** Whether the walk goes on once the log is read to its end, and how long it waits then. */
type Mode = { follow: false } | { follow: true; intervalMs: number };

function feed(http: Transport, query: RawQuery, options: ChangeReadOptions, mode: Mode): ChangeFeed {
  // Stops the walk on the caller's signal and on return(), which would otherwise wait behind a pending request or wait.
  const stop = new AbortController();
  let cursor = typeof query.cursor === 'string' ? query.cursor : undefined;
  let stored = cursor;
  async function* walk(): AsyncGenerator<Change, void, undefined> {
    const abort = () => stop.abort();
    options.signal?.addEventListener('abort', abort, { once: true });
    if (options.signal?.aborted === true) abort();
    try {
      while (!stop.signal.aborted) {
        let page: { data: Change[]; meta: ChangeMeta };
        try {
          page = await http.json(CHANGES_PATH, { ...query, ...(cursor ? { cursor } : {}) }, stop.signal);
        } catch (error) {
          if (stop.signal.aborted) return;
          throw error;
        }
        const { data, meta } = page;
        for (const [i, change] of data.entries()) {
          if (stop.signal.aborted) return;
          if (i === data.length - 1) cursor = meta.cursor;
          yield change;
        }
        cursor = meta.cursor;
        if (cursor !== stored) {
          stored = cursor;
          await options.onCursor?.(cursor);
        }
        if (!mode.follow && data.length === 0) return;
        // A batch less than full read the log to its end: the next change is at least a write away.
        if (mode.follow && data.length < meta.perPage) await pause(mode.intervalMs, stop.signal);
      }
    } finally {
      options.signal?.removeEventListener('abort', abort);
    }
  }
  const changes = walk();
  const end = changes.return.bind(changes);
  return Object.defineProperties(changes, {
    cursor: { get: () => cursor },
    return: {
      value: (value: void) => {
        stop.abort();
        return end(value);
      },
    },
  }) as ChangeFeed;
}

/** The read options taken out of a query: what the server is sent, and what the walk does. */
function split(params: ChangeAllParams & { intervalMs?: number }) {
  const { signal, onCursor, intervalMs, ...query } = params;
  return {
    query: { perPage: MAX_PER_PAGE, ...(query as RawQuery) },
    options: { signal, onCursor },
    intervalMs: intervalMs ?? DEFAULT_INTERVAL_MS,
  };
}

export function changesApi(http: Transport): ChangesApi {
  return {
    list: (params = {}) => http.json(CHANGES_PATH, params),
    all: (params = {}) => {
      const { query, options } = split(params);
      return feed(http, query, options, { follow: false });
    },
    follow: (cursor, params = {}) => {
      const { query, options, intervalMs } = split(params);
      return feed(http, { ...query, cursor }, options, { follow: true, intervalMs });
    },
  };
}

/** One batch of the changes one scan made. */
export const scanChanges = (http: Transport, scansPath: string, id: string, params: ScanChangesParams = {}) =>
  http.json<{ data: Change[]; meta: ChangeMeta }>(`${scansPath}/${encodeURIComponent(id)}/changes`, params);
