// The two ways a call of the typed client fails: the server answered with an error (SecinvApiError, carrying what the
// error body and headers said), or no answer came (SecinvConnectionError: refused, reset, timed out, cut off).
import type { ErrorCode } from '../domain/errors.js';

/** One problem of an error response, as the server lists it. */
export interface ApiProblem {
  code: ErrorCode;
  field?: string;
  message: string;
}

export class SecinvApiError extends Error {
  override readonly name = 'SecinvApiError';
  /** The HTTP status. */
  readonly status: number;
  /** The code of the first problem (`unauthorized`, `invalid_parameter`, …). */
  readonly code: ErrorCode;
  /** The parameter the first problem is about, when it names one. */
  readonly field: string | undefined;
  /** Every problem the server listed (a 400 lists every bad parameter at once). */
  readonly problems: readonly ApiProblem[];
  /** The `X-Request-Id` of the response, to find the request in the server's log. */
  readonly requestId: string | undefined;
  /** Seconds the server asked to wait (`Retry-After` of a 429 or 503). */
  readonly retryAfter: number | undefined;

  constructor(
    status: number,
    problems: readonly ApiProblem[],
    requestId: string | undefined,
    retryAfter: number | undefined,
  ) {
    const first = problems[0] ?? { code: 'internal' as const, message: `HTTP ${status}` };
    super(problems.length > 1 ? `${first.message} (and ${problems.length - 1} more)` : first.message);
    this.status = status;
    this.code = first.code;
    this.field = first.field;
    this.problems = problems;
    this.requestId = requestId;
    this.retryAfter = retryAfter;
  }

  /** The distinct fields of every problem. */
  get fields(): string[] {
    return [...new Set(this.problems.flatMap((p) => (p.field === undefined ? [] : [p.field])))];
  }
}

export class SecinvConnectionError extends Error {
  override readonly name = 'SecinvConnectionError';
  /** The URL asked, without credentials (the key travels in a header, never in the URL). */
  readonly url: string;
  /** Whether the time limit ran out (else the connection failed: refused, reset, a name that does not resolve). */
  readonly timedOut: boolean;

  constructor(message: string, url: string, timedOut: boolean, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.url = url;
    this.timedOut = timedOut;
  }
}
