// Probes for orchestrators, without authentication: /livez (the process answers) and /readyz (the database answers).
import type { FastifyInstance } from 'fastify';
import { apiError } from '../domain/errors.js';
import type { Storage } from '../storage/index.js';
import { JSON_TYPE } from './respond.js';

/** Set by the server when a shutdown begins: the instance stops being ready but still answers (docs/DESIGN.md §30). */
export interface Lifecycle {
  draining: boolean;
}

export async function healthRoutes(
  app: FastifyInstance,
  { storage, lifecycle }: { storage: Storage; lifecycle: Lifecycle },
): Promise<void> {
  app.get('/livez', { schema: { hide: true } }, async (_request, reply) =>
    reply.type(JSON_TYPE).send('{"status":"ok"}'),
  );
  // A database failure is thrown as UnavailableError by storage, which the error handler answers 503 with Retry-After.
  app.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
    if (lifecycle.draining)
      throw apiError('unavailable', 'this instance is shutting down', undefined, { 'Retry-After': '2' });
    await storage.ping();
    return reply.type(JSON_TYPE).send('{"status":"ok"}');
  });
}
