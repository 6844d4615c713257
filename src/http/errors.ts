// The one error handler: every failure becomes `{ errors: [{ code, field?, message }] }` with the status of its code.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, apiError, errorStatus, UnavailableError, type ErrorCode, type Problem } from '../domain/errors.js';
import { JSON_TYPE } from './respond.js';

const body = (problems: Problem[]) => JSON.stringify({ errors: problems });

/** A database that went away usually comes back (restart, failover) within a few seconds. */
const RETRY_AFTER_SECONDS = 2;

/** Fastify's own client errors (bad URL encoding, oversized headers…) keep their status in the error shape. */
const fastifyCodes: Record<number, ErrorCode> = {
  404: 'not_found',
  405: 'method_not_allowed',
  414: 'uri_too_long',
  431: 'headers_too_large',
};

/**
 * Errors Fastify raises before routing (a path that is not valid percent-encoded UTF-8, an over-long path parameter)
 * bypass the error handler; this answers them in the same shape, with the request id.
 */
export function frameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const problem: Problem =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? { code: 'uri_too_long', message: 'the path is too long' }
      : { code: 'invalid_parameter', message: 'the path is not valid percent-encoded UTF-8' };
  void reply
    .code(errorStatus[problem.code])
    .header('X-Request-Id', request.id)
    .type(JSON_TYPE)
    .send(body([problem]));
}

/**
 * Errors Node raises while parsing a request (headers over 16 KiB, malformed request lines) reach no route: the
 * answer is written to the socket directly, still in the error shape and with a request id.
 */
export function clientErrorHandler(error: Error & { code?: string }, socket: Duplex): void {
  if (!socket.writable) return;
  if (error.code === 'HPE_HEADER_OVERFLOW')
    answerOnSocket(socket, 'Request Header Fields Too Large', {
      code: 'headers_too_large',
      message: 'the request headers are larger than 16 KiB',
    });
  else answerOnSocket(socket, 'Bad Request', { code: 'invalid_parameter', message: 'the request is not valid HTTP' });
}

/** An answer in the error shape written straight to a socket no route will see, closing the connection. */
function answerOnSocket(socket: Duplex, reason: string, problem: Problem, extra = ''): void {
  const payload = body([problem]);
  socket.end(
    `HTTP/1.1 ${errorStatus[problem.code]} ${reason}\r\nContent-Type: ${JSON_TYPE}\r\n` +
      `Content-Length: ${Buffer.byteLength(payload)}\r\nX-Request-Id: ${randomUUID()}\r\n${extra}` +
      `Connection: close\r\n\r\n${payload}`,
  );
}

/**
 * Requests Node answers itself unless told otherwise, answered in the contract's shape with a request id: `CONNECT`
 * (Node closes the socket without a byte when nobody listens for it) is 405, and an `Expect` other than
 * `100-continue` (an empty 417 by default) is 417. A request without `Host` reaches Fastify (the server is created
 * with `requireHostHeader: false`), whose hook answers it 400 (see `requireHost`).
 */
export function answerOutsideRoutes(server: Server): void {
  server.on('connect', (_request: IncomingMessage, socket: Duplex) => {
    answerOnSocket(
      socket,
      'Method Not Allowed',
      { code: 'method_not_allowed', message: 'CONNECT is not allowed: this server is not a proxy' },
      'Allow: GET, HEAD\r\n',
    );
  });
  server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) => {
    const payload = body([
      {
        code: 'expectation_failed',
        message: `Expect: ${String(request.headers.expect)} cannot be met; only 100-continue is understood`,
      },
    ]);
    response
      .writeHead(417, {
        'Content-Type': JSON_TYPE,
        'Content-Length': Buffer.byteLength(payload),
        'X-Request-Id': randomUUID(),
        Connection: 'close',
      })
      .end(payload);
  });
}

/** HTTP/1.1 requires Host (RFC 9112 §3.2); Node's own refusal was an empty 400. */
export const requireHost = (request: FastifyRequest): void => {
  if (request.headers.host === undefined && request.raw.httpVersion === '1.1')
    throw apiError('invalid_parameter', 'the Host header is required in an HTTP/1.1 request');
};

export function registerErrorHandling(app: FastifyInstance): void {
  // A HEAD answer has no body (RFC 9110 §9.3.2) but the headers of the GET answer. Fastify does this itself on the
  // routes that exist; on an unknown path only Node would drop the body, on the wire, and inject() keeps it.
  app.addHook('onSend', async (request, reply, payload) => {
    if (request.method !== 'HEAD' || request.routeOptions.url !== undefined || typeof payload !== 'string')
      return payload;
    reply.header('content-length', Buffer.byteLength(payload));
    return '';
  });

  app.setNotFoundHandler(async () => {
    throw apiError('not_found', 'no such resource');
  });

  app.setErrorHandler(async (error: FastifyError | ApiError, request, reply) => {
    if (error instanceof ApiError) {
      return reply.code(error.status).headers(error.headers).type(JSON_TYPE).send(body(error.problems));
    }
    if (error instanceof UnavailableError) {
      request.log.warn({ err: error.cause ?? error }, 'database unavailable');
      return reply
        .code(503)
        .header('Retry-After', String(RETRY_AFTER_SECONDS))
        .type(JSON_TYPE)
        .send(body([{ code: 'unavailable', message: 'the database is unavailable or overloaded; retry shortly' }]));
    }
    const status = error.statusCode;
    if (status !== undefined && status >= 400 && status < 500) {
      const code: ErrorCode = fastifyCodes[status] ?? 'invalid_parameter';
      request.log.info({ err: error }, 'client error');
      return reply
        .code(code === 'invalid_parameter' ? 400 : status)
        .type(JSON_TYPE)
        .send(body([{ code, message: error.message }]));
    }
    request.log.error({ err: error }, 'request failed');
    return reply
      .code(500)
      .type(JSON_TYPE)
      .send(body([{ code: 'internal', message: `internal error (request id ${request.id})` }]));
  });
}
