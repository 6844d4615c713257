// HTTP for the typed client, on Node's own fetch: the query string, the bearer key, a time limit per attempt, retries
// of 429 and 503 (docs/DESIGN.md §31), error bodies turned into SecinvApiError, NDJSON bodies read line by line, and a
// caller's signal that stops a request and a retry's wait.
import type { ErrorCode } from '../domain/errors.js';
import { SecinvApiError, SecinvConnectionError, type ApiProblem } from './errors.js';

export interface ClientOptions {
  /** The server, e.g. `http://127.0.0.1:8080` (a path prefix is kept: `https://host/secinv`). */
  baseUrl: string;
  /** A tenant API key (`secinv keys create`). */
  apiKey: string;
  /** Time limit of one attempt, until the whole answer is read (a download: between two chunks). Default 30 s. */
  timeoutMs?: number;
  /** Retries of a 429 or 503 answer, after the wait the server asks for (else a growing one). Default 3. */
  retries?: number;
  /** The longest wait before a retry; a server asking for more is answered with the error at once. Default 60 s. */
  maxRetryDelayMs?: number;
}

/** A query as sent: lists joined by commas; undefined values left out. */
export type RawQuery = Record<string, string | number | boolean | readonly (string | number)[] | undefined>;

export interface Transport {
  /** GET of a JSON answer; `signal` stops the request (and a wait before a retry) when it aborts. */
  json<T>(path: string, query: RawQuery, signal?: AbortSignal): Promise<T>;
  /**
   * POST of bytes, answered with JSON: its status and `Location` too. Retried on 429 and 503 only with an
   * Idempotency-Key among the headers, which makes the same request twice safe.
   */
  post<T>(
    path: string,
    query: RawQuery,
    body: Uint8Array,
    headers: Record<string, string>,
  ): Promise<{ status: number; location: string | null; body: T }>;
  /** GET of an NDJSON download, one parsed record per line, read as it arrives; `onHeaders` sees its headers first. */
  ndjson<T>(path: string, query: RawQuery, onHeaders?: (headers: Headers) => void): AsyncGenerator<T>;
}

const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_RETRIES = 3;
const DEFAULT_MAX_RETRY_DELAY_MS = 60_000;
const FIRST_BACKOFF_MS = 250;

export function buildUrl(baseUrl: string, path: string, query: RawQuery): string {
  const url = new URL(baseUrl.replace(/\/+$/, '') + path);
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined) continue;
    const text = Array.isArray(value) ? value.join(',') : String(value);
    url.searchParams.set(name, text);
  }
  return url.toString();
}

/** Seconds of a Retry-After header: delta-seconds or an HTTP date. */
export function retryAfterSeconds(header: string | null, now = Date.now()): number | undefined {
  if (header === null || header.trim() === '') return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim());
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - now) / 1000));
}

/** The wait before retry `attempt` (0 first): what the server asked, else 250 ms doubling, with jitter. */
export function retryDelayMs(attempt: number, retryAfter: number | undefined): number {
  if (retryAfter !== undefined) return retryAfter * 1000;
  const ceiling = FIRST_BACKOFF_MS * 2 ** attempt;
  return ceiling / 2 + Math.random() * (ceiling / 2);
}

const problemsOf = (status: number, body: unknown): ApiProblem[] => {
  const errors = (body as { errors?: unknown } | null)?.errors;
  if (Array.isArray(errors) && errors.length > 0) {
    return errors.map((e: { code?: unknown; field?: unknown; message?: unknown }) => ({
      code: (typeof e.code === 'string' ? e.code : 'internal') as ErrorCode,
      ...(typeof e.field === 'string' ? { field: e.field } : {}),
      message: typeof e.message === 'string' ? e.message : `HTTP ${status}`,
    }));
  }
  // Not the API's error shape (a proxy in front of it, another server at that address).
  return [
    { code: status >= 500 ? 'internal' : 'not_found', message: `HTTP ${status} from a server that is not secinv` },
  ];
};

/** The error an answer other than 2xx stands for (its body in the API's error shape, or not). */
export async function apiErrorOf(response: Response): Promise<SecinvApiError> {
  const text = await response.text().catch(() => '');
  let body: unknown = null;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: problemsOf says so
  }
  return new SecinvApiError(
    response.status,
    problemsOf(response.status, body),
    response.headers.get('x-request-id') ?? undefined,
    retryAfterSeconds(response.headers.get('retry-after')),
  );
}

/** Waits `ms`, or less when `signal` aborts first; the timer is cleared either way, so nothing is left pending. */
export function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted === true) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * A timer that aborts an attempt, and the caller's signal that stops it; `touch` restarts the timer (a download stays
 * alive while chunks arrive).
 */
function deadline(ms: number, stop?: AbortSignal) {
  const controller = new AbortController();
  const abort = () => controller.abort();
  let timer = setTimeout(abort, ms);
  stop?.addEventListener('abort', abort, { once: true });
  if (stop?.aborted === true) abort();
  return {
    signal: controller.signal,
    touch: () => {
      clearTimeout(timer);
      timer = setTimeout(abort, ms);
    },
    clear: () => {
      clearTimeout(timer);
      stop?.removeEventListener('abort', abort);
    },
    get expired() {
      return controller.signal.aborted && stop?.aborted !== true;
    },
  };
}

export function createTransport(options: ClientOptions): Transport {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const retries = options.retries ?? DEFAULT_RETRIES;
  const maxDelay = options.maxRetryDelayMs ?? DEFAULT_MAX_RETRY_DELAY_MS;
  const headers = { authorization: `Bearer ${options.apiKey}` };

  const failure = (url: string, error: unknown, timedOut: boolean, stop?: AbortSignal): Error => {
    if (error instanceof SecinvApiError || error instanceof SecinvConnectionError) return error;
    if (stop?.aborted === true)
      return new SecinvConnectionError(`the request to ${url} was stopped`, url, false, error);
    if (timedOut) return new SecinvConnectionError(`no answer from ${url} within ${timeoutMs} ms`, url, true, error);
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const reason = cause?.code ?? cause?.message ?? (error as Error).message;
    return new SecinvConnectionError(`cannot reach ${url}: ${reason}`, url, false, error);
  };

  /** One response with a 2xx status, after the retries of 429 and 503; its deadline still running. */
  async function send(
    path: string,
    query: RawQuery,
    accept: string,
    upload?: { body: Uint8Array; headers: object },
    stop?: AbortSignal,
  ) {
    const url = buildUrl(options.baseUrl, path, query);
    const retryable = upload === undefined || 'idempotency-key' in upload.headers;
    for (let attempt = 0; ; attempt += 1) {
      const timer = deadline(timeoutMs, stop);
      let response: Response;
      try {
        response = await fetch(
          url,
          upload === undefined
            ? { headers: { ...headers, accept }, signal: timer.signal }
            : {
                method: 'POST',
                headers: { ...headers, accept, ...upload.headers },
                // Node fetch takes any Uint8Array; the DOM types of the console build want an ArrayBuffer-backed one.
                body: upload.body as Uint8Array<ArrayBuffer>,
                signal: timer.signal,
              },
        );
      } catch (error) {
        timer.clear();
        throw failure(url, error, timer.expired, stop);
      }
      if (response.ok) return { url, response, timer };
      let error: SecinvApiError;
      try {
        error = await apiErrorOf(response);
      } finally {
        timer.clear();
      }
      const again = retryable && (response.status === 429 || response.status === 503);
      const wait = retryDelayMs(attempt, error.retryAfter);
      if (!again || attempt >= retries || wait > maxDelay) throw error;
      await pause(wait, stop);
      if (stop?.aborted === true) throw failure(url, stop.reason, false, stop);
    }
  }

  return {
    async json<T>(path: string, query: RawQuery, stop?: AbortSignal): Promise<T> {
      const { url, response, timer } = await send(path, query, 'application/json', undefined, stop);
      try {
        return (await response.json()) as T;
      } catch (error) {
        throw failure(url, error, timer.expired, stop);
      } finally {
        timer.clear();
      }
    },

    async post<T>(path: string, query: RawQuery, body: Uint8Array, extra: Record<string, string>) {
      const { url, response, timer } = await send(path, query, 'application/json', { body, headers: extra });
      try {
        return {
          status: response.status,
          location: response.headers.get('location'),
          body: (await response.json()) as T,
        };
      } catch (error) {
        throw failure(url, error, timer.expired);
      } finally {
        timer.clear();
      }
    },

    async *ndjson<T>(path: string, query: RawQuery, onHeaders?: (headers: Headers) => void): AsyncGenerator<T> {
      const { url, response, timer } = await send(path, query, 'application/x-ndjson');
      onHeaders?.(response.headers);
      const body = response.body;
      if (body === null) return;
      const reader = body.pipeThrough(new TextDecoderStream()).getReader();
      let rest = '';
      try {
        for (;;) {
          let chunk: Awaited<ReturnType<typeof reader.read>>;
          try {
            chunk = await reader.read();
          } catch (error) {
            // A download cut off by the server (its chunked body never ended) or by the time limit.
            throw failure(url, error, timer.expired);
          }
          if (chunk.done) break;
          timer.touch();
          const lines = (rest + chunk.value).split('\n');
          rest = lines.pop() ?? '';
          for (const line of lines) if (line.trim() !== '') yield JSON.parse(line) as T;
        }
        if (rest.trim() !== '') yield JSON.parse(rest) as T;
      } finally {
        timer.clear();
        // A consumer that stops early (break) ends the download instead of leaving it open.
        await reader.cancel().catch(() => undefined);
      }
    },
  };
}
