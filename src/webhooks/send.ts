// One delivery's request (pipeline.md §5): `POST URL` with the body signed as Standard Webhooks says, by the
// `standardwebhooks` package (the scheme's own implementation): `webhook-id`, `webhook-timestamp` (seconds) and
// `webhook-signature` (`v1,` + base64 HMAC-SHA256 of `id.timestamp.body` under the secret). node:http rather than
// fetch: its `lookup` is what checks every address a name resolves to and connects to those (destinations.ts), and
// it follows no redirect. The whole exchange, connection included, is bounded by the timeout.
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { Webhook } from 'standardwebhooks';
import { checkDestination, checkedLookup, DestinationRefused } from './destinations.js';

export interface SendOptions {
  timeoutMs: number;
  allowPrivate: boolean;
  now?: () => Date;
}

/** What came of one request: the receiver's status, or why none came. */
export interface SendResult {
  status: number | null;
  durationMs: number;
  error: string | null;
}

/** The three headers of the scheme for this message. */
export function signatureHeaders(secret: string, id: string, at: Date, body: Buffer): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(id, at, body),
  };
}

const CONNECTION_ERRORS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ENOTFOUND: 'no such host',
  EAI_AGAIN: 'the name did not resolve (try again)',
};

function reasonOf(error: Error): string {
  if (error instanceof DestinationRefused) return `refused: ${error.message}`;
  const code = (error as NodeJS.ErrnoException).code;
  return (code !== undefined ? CONNECTION_ERRORS[code] : undefined) ?? error.message;
}

/** Sends the signed body; never throws (a failure is a result). */
export async function sendSigned(
  url: string,
  secret: string,
  id: string,
  body: Buffer,
  options: SendOptions,
): Promise<SendResult> {
  const started = performance.now();
  const done = (status: number | null, error: string | null): SendResult => ({
    status,
    durationMs: performance.now() - started,
    error,
  });
  let target: URL;
  try {
    target = new URL(url);
    await checkDestination(target, options.allowPrivate);
  } catch (error) {
    return done(null, reasonOf(error as Error));
  }
  const headers = {
    'content-type': 'application/json',
    'content-length': String(body.length),
    'user-agent': 'secinv-webhooks',
    ...signatureHeaders(secret, id, (options.now ?? (() => new Date()))(), body),
  };
  const request = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<SendResult>((resolve) => {
    let settled = false;
    const finish = (result: SendResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    const req = request(target, {
      method: 'POST',
      headers,
      lookup: checkedLookup(options.allowPrivate),
      // A connection of its own: a receiver's keep-alive socket is never reused by another endpoint's delivery.
      agent: false,
    });
    const timer = setTimeout(() => {
      finish(done(null, `timed out after ${options.timeoutMs} ms`));
      req.destroy();
    }, options.timeoutMs);
    req.on('response', (response: IncomingMessage) => {
      const status = response.statusCode ?? null;
      const location = response.headers.location;
      // The status is the answer; the body is not read.
      response.destroy();
      req.destroy();
      const redirect = status !== null && status >= 300 && status < 400;
      finish(done(status, redirect ? `redirect${location ? ` to ${location}` : ''} not followed` : null));
    });
    req.on('error', (error) => finish(done(null, reasonOf(error))));
    req.end(body);
  });
}
