// Probes for orchestrators, without authentication: /livez (the process answers) and /readyz (the database answers).
import type { FastifyInstance } from 'fastify';
import type { Storage } from '../storage/index.js';
import { JSON_TYPE } from './respond.js';

export async function healthRoutes(app: FastifyInstance, { storage }: { storage: Storage }): Promise<void> {
  app.get('/livez', { schema: { hide: true } }, async (_request, reply) =>
    reply.type(JSON_TYPE).send('{"status":"ok"}'),
  );
  // A database failure is thrown as UnavailableError by storage, which the error handler answers 503 with Retry-After.
  app.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
    await storage.ping();
    return reply.type(JSON_TYPE).send('{"status":"ok"}');
  });
}
