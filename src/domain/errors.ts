// The closed list of error codes the API can answer with, and the one table from code to HTTP status.
// Handlers and hooks throw ApiError; only the error handler (src/http/errors.ts) turns it into a body.

export const errorStatus = {
  invalid_parameter: 400,
  unknown_parameter: 400,
  invalid_cursor: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  not_acceptable: 406,
  conflict: 409,
  gone: 410,
  payload_too_large: 413,
  uri_too_long: 414,
  unsupported_media_type: 415,
  expectation_failed: 417,
  rate_limited: 429,
  headers_too_large: 431,
  internal: 500,
  unavailable: 503,
} as const;

export type ErrorCode = keyof typeof errorStatus;

export interface Problem {
  code: ErrorCode;
  field?: string;
  message: string;
}

export class ApiError extends Error {
  readonly problems: Problem[];
  readonly status: number;
  readonly headers: Record<string, string>;

  constructor(problems: Problem[], headers: Record<string, string> = {}) {
    const first = problems[0];
    if (!first) throw new TypeError('ApiError needs at least one problem');
    super(first.message);
    this.name = 'ApiError';
    this.problems = problems;
    this.status = errorStatus[first.code];
    this.headers = headers;
  }
}

export const apiError = (
  code: ErrorCode,
  message: string,
  field?: string,
  headers?: Record<string, string>,
): ApiError => new ApiError([field === undefined ? { code, message } : { code, field, message }], headers);

/** A failure the user caused outside HTTP (bad CLI input, invalid import): printed as one line, exit code 1. */
export class UserError extends Error {
  override name = 'UserError';
}

/** The database is unreachable, restarting, overloaded, or cancelled a statement that ran too long: answered 503. */
export class UnavailableError extends Error {
  override name = 'UnavailableError';
}

// The errno codes a person meets when naming a file, in words; any other code is given as it is.
const FILE_ERRORS: Record<string, string> = {
  ENOENT: 'no such file',
  EISDIR: 'it is a folder, not a file',
  ENOTDIR: 'a part of the path is not a folder',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  ELOOP: 'too many symbolic links',
  ENAMETOOLONG: 'the name is too long',
  EMFILE: 'too many open files',
  EIO: 'input/output error (a failing disk?)',
};

/** Why a file could not be read, for a message: `no such file (ENOENT)`, or the error's message without a code. */
export function fileErrorReason(error: unknown): string {
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code !== 'string') return typeof message === 'string' ? message : String(error);
  const words = FILE_ERRORS[code];
  return words === undefined ? code : `${words} (${code})`;
}
