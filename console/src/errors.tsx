// Errors as a person needs them: what went wrong, in words, and what to do. A 400 lists every problem the server
// found (each naming its parameter), a server that does not answer says so, anything else shows the server's message
// and the request id to look for in its log.
import { SecinvApiError, SecinvConnectionError } from '../../src/client/index.js';

/** Whether the same request may work later (no answer, a limit, the server's own trouble): then "Try again". */
const retryable = (error: unknown): boolean =>
  error instanceof SecinvConnectionError ||
  (error instanceof SecinvApiError && (error.status === 429 || error.status >= 500));

export function describeError(error: unknown): { title: string; details: string[]; requestId?: string | undefined } {
  if (error instanceof SecinvConnectionError) {
    return {
      title: error.timedOut ? 'The server did not answer in time.' : 'The server cannot be reached.',
      details: [
        error.timedOut
          ? 'It may be busy with a large request; try again in a moment.'
          : 'Check that secinv serve is running and that this page was opened from it.',
      ],
    };
  }
  if (error instanceof SecinvApiError) {
    // The server's messages usually name their parameter already.
    const problems = error.problems.map((p) =>
      p.field === undefined || p.message.includes(p.field) ? p.message : `${p.field}: ${p.message}`,
    );
    switch (error.status) {
      case 400:
        return {
          title:
            problems.length > 1
              ? `The server did not accept ${problems.length} of the filters:`
              : 'The server did not accept a filter:',
          details: problems,
          requestId: error.requestId,
        };
      case 401:
        return {
          title: 'The server refused this key.',
          details: ['It is unknown, expired or revoked. A key comes from secinv keys create (or secinv demo).'],
        };
      case 404:
        return { title: 'Not found.', details: problems, requestId: error.requestId };
      case 429:
        return {
          title: 'Too many requests with this key.',
          details: [`Try again in ${error.retryAfter ?? 60} seconds.`],
          requestId: error.requestId,
        };
      case 503:
        return {
          title: 'The server is unavailable for a moment.',
          details: [...problems, 'Try again shortly.'],
          requestId: error.requestId,
        };
      default:
        return { title: `The server answered ${error.status}.`, details: problems, requestId: error.requestId };
    }
  }
  return { title: 'Something went wrong in the console.', details: [String(error)] };
}

export function ErrorNotice(props: { error: unknown; retry?: () => void }) {
  const { title, details, requestId } = describeError(props.error);
  return (
    <div class="error" role="alert">
      <p class="error-title">{title}</p>
      {details.length > 0 && (
        <ul>
          {details.map((d) => (
            <li key={d}>{d}</li>
          ))}
        </ul>
      )}
      {requestId !== undefined && <p class="muted">Request id: {requestId}</p>}
      {props.retry && retryable(props.error) && (
        <button type="button" onClick={props.retry}>
          Try again
        </button>
      )}
    </div>
  );
}
