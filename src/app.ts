// Builds the HTTP application from its dependencies. It never listens: src/server.ts does, tests use app.inject().
import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { apiError } from './errors.js';
import { authenticate } from './http/auth.js';
import { frameworkErrors, registerErrorHandling } from './http/errors.js';
import { validatorCompiler } from './http/query.js';
import { registerOpenApi } from './http/openapi.js';
import { ASSET_PATH, ASSETS_PATH, assetRoutes } from './modules/assets/routes.js';
import { RISKS_PATH, riskRoutes } from './modules/risks/routes.js';
import { VULNERABILITIES_PATH, vulnerabilityRoutes } from './modules/vulnerabilities/routes.js';
import { cursorCodec } from './http/cursor.js';
import type { Storage } from './storage/index.js';

export interface AppDependencies {
  storage: Storage;
  logger?: FastifyServerOptions['logger'];
  now?: () => Date;
}

const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;
const API_PATHS = [ASSETS_PATH, ASSET_PATH, RISKS_PATH, VULNERABILITIES_PATH];
const OTHER_METHODS = ['DELETE', 'PATCH', 'POST', 'PUT', 'OPTIONS'] as const;

export async function buildApp({ storage, logger = false, now }: AppDependencies): Promise<FastifyInstance> {
  const app = Fastify({
    logger: logger === false ? false : {
      ...(typeof logger === 'object' ? logger : {}),
      // Keys travel in this header; it must never reach a log line.
      redact: ['req.headers.authorization', 'req.headers.cookie'],
    },
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    // Tests and clients send `Content-Type: application/json` on GETs; there is no body to parse, so do not try.
    bodyLimit: 1024,
    frameworkErrors,
  });
  app.setValidatorCompiler(validatorCompiler);
  registerErrorHandling(app);
  app.addHook('onRequest', async (request, reply) => {
    reply.header('X-Request-Id', request.id);
  });

  await registerOpenApi(app);
  await app.register(async (api) => {
    api.addHook('onRequest', authenticate(storage, now));
    await assetRoutes(api, { storage });
    await riskRoutes(api, { storage, cursors: cursorCodec(await storage.cursorKey()) });
    await vulnerabilityRoutes(api, { storage });
  });

  for (const url of API_PATHS) {
    app.route({
      method: [...OTHER_METHODS],
      url,
      schema: { hide: true },
      handler: async (_request, reply) => {
        reply.header('Allow', 'GET, HEAD');
        throw apiError('method_not_allowed', 'only GET and HEAD are allowed here', undefined, { Allow: 'GET, HEAD' });
      },
    });
  }
  return app;
}
