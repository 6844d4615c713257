// Which failures mean the database cannot answer now (a 503, a command's 'run it again'), as opposed to bugs.
import { UnavailableError } from '../../domain/errors.js';
import { isBusy } from './journal.js';

// SQLSTATE classes and codes that mean "the database cannot answer now", not "the request is wrong".
const UNAVAILABLE_SQLSTATES = new Set([
  '57014',
  '57P01',
  '57P02',
  '57P03',
  '53300',
  '53400',
  '40001',
  '40P01',
  '55P03',
]);
const UNAVAILABLE_ERRNOS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'SQLITE_BUSY',
  'SQLITE_LOCKED',
]);

/**
 * True for failures of the database connection or capacity (answered 503), as opposed to bugs (500). pg's messages:
 * "timeout exceeded when trying to connect" is the pool's queue wait running out, "timeout expired" a new connection
 * that did not open within the connect timeout.
 */
export function isUnavailable(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown };
  const code = typeof e?.code === 'string' ? e.code : '';
  if (UNAVAILABLE_SQLSTATES.has(code) || code.startsWith('08') || UNAVAILABLE_ERRNOS.has(code)) return true;
  const message = typeof e?.message === 'string' ? e.message : '';
  return /timeout exceeded when trying to connect|^timeout expired$|Connection terminated|Client has encountered a connection error|connection is not open|terminating connection|driver has already been destroyed|pool after calling end|^Query read timeout$|not queryable/i.test(
    message,
  );
}

/**
 * What an unavailable database means to the one who ran the command (the API answers its own 503 body): a write beside
 * another on SQLite, or two writes that PostgreSQL could not both let through, says to run it again.
 */
export function unavailableMessage(error: unknown): string {
  const code = (error as { code?: unknown })?.code;
  if (isBusy(error) || code === 'SQLITE_LOCKED')
    return 'the database is busy: another process is writing it (retry when that write ends)';
  if (code === '40P01' || code === '40001')
    return 'this write conflicted with another that ran at the same time, and nothing was written: run it again';
  return 'the database is unavailable';
}

/** Wraps every function of an object so database unavailability surfaces as UnavailableError. */
export function guarded<T extends Record<string, unknown>>(methods: T): T {
  const out: Record<string, unknown> = {};
  for (const [name, fn] of Object.entries(methods)) {
    out[name] =
      typeof fn !== 'function'
        ? fn
        : async (...args: unknown[]) => {
            try {
              return await (fn as (...a: unknown[]) => Promise<unknown>)(...args);
            } catch (error) {
              if (isUnavailable(error)) throw new UnavailableError(unavailableMessage(error), { cause: error });
              throw error;
            }
          };
  }
  return out as T;
}
