// Builds the HTTP application from its dependencies. It never listens: src/server.ts does, tests use app.inject().
import { randomUUID, timingSafeEqual } from 'node:crypto';
import { constants as zlib } from 'node:zlib';
import compress from '@fastify/compress';
import rateLimit from '@fastify/rate-limit';
import Fastify, { LogController, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { apiError } from './domain/errors.js';
import { authenticate } from './http/auth.js';
import { securityHeaders } from './http/security-headers.js';
import { registerCaching, serverFingerprint } from './http/caching.js';
import type { CompressionOptions } from './http/compression.js';
import { consoleRoutes } from './http/console.js';
import { cursorCodec } from './http/cursor.js';
import {
  answerOutsideRoutes,
  clientErrorHandler,
  frameworkErrors,
  registerErrorHandling,
  requireHost,
} from './http/errors.js';
import { healthRoutes, type Lifecycle } from './http/health.js';
import type { Metrics } from './http/metrics.js';
import { registerOpenApi } from './modules/openapi/routes.js';
import { validatorCompiler } from './http/query.js';
import { lazySerializers } from './http/serializers.js';
import { ASSET_PATH, ASSETS_PATH, assetRoutes } from './modules/assets/routes.js';
import { SBOM_DOWNLOAD_PATH, SBOM_LINK_PATH, sbomDownloadRoute, sbomLinkRoute } from './modules/assets/sbom.js';
import { downloadTokens, redactTokens } from './http/signed-url.js';
import { CHANGES_PATH, changeRoutes, SCAN_CHANGES_PATH } from './modules/changes/routes.js';
import { RISKS_PATH, riskRoutes } from './modules/risks/routes.js';
import { SCAN_PATH, SCANS_PATH, scanRoutes } from './modules/scans/routes.js';
import { VULNERABILITIES_PATH, vulnerabilityRoutes } from './modules/vulnerabilities/routes.js';
import { FINDING_METRICS_PATH, metricRoutes, REMEDIATION_METRICS_PATH } from './modules/metrics/routes.js';
import { dueEpochs } from './http/timed.js';
import { dayOf } from './domain/remediation.js';
import type { Storage } from './storage/index.js';
import { timeSliced } from './lib/time-sliced.js';

export interface HttpOptions {
  /** Requests per minute per API key; 0 turns limiting off. */
  rateLimitPerMinute: number;
  /** A request still unanswered after this long is cut off. */
  requestTimeoutMs: number;
  /** Prometheus metrics to record into; with `metricsToken` they are also served at /metrics on this app. */
  metrics?: Metrics | undefined;
  metricsToken?: string | undefined;
  /** Serve HTTPS with this certificate and key (PEM). */
  https?: { cert: Buffer; key: Buffer } | undefined;
  /** The URL clients reach the server at, for the links it hands out; undefined: each request's scheme and Host. */
  publicUrl?: string | undefined;
  /** Compression of tenant 200s and the cache of their compressed bodies (docs/DESIGN.md §25). */
  compression: CompressionOptions;
  /** Largest scan upload accepted, in bytes after decoding (SECINV_SCAN_MAX_BYTES). */
  scanMaxBytes: number;
}

export interface AppDependencies {
  storage: Storage;
  /** Shared with the server: once it is draining, /readyz fails and every answer closes its connection. */
  lifecycle?: Lifecycle;
  logger?: FastifyServerOptions['logger'];
  now?: () => Date;
  http?: Partial<HttpOptions>;
  /** Called when an upload queued a scan: wakes this process's scan runner (src/ingest/scan-runner.ts). */
  scanQueued?: () => void;
}

const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;
const API_PATHS = [
  ASSETS_PATH,
  ASSET_PATH,
  SBOM_LINK_PATH,
  SBOM_DOWNLOAD_PATH,
  RISKS_PATH,
  VULNERABILITIES_PATH,
  CHANGES_PATH,
  SCAN_CHANGES_PATH,
  FINDING_METRICS_PATH,
  REMEDIATION_METRICS_PATH,
];
const OTHER_METHODS = ['DELETE', 'PATCH', 'POST', 'PUT', 'OPTIONS'] as const;
/** Longest request target accepted (414 beyond); headers as a whole are bounded by Node at 16 KiB (431 beyond). */
export const MAX_URL_LENGTH = 8192;
/** How long the handlers started in one turn of the event loop may hold it before the loop polls again (§116). */
const HANDLER_SLICE_MS = 2;
export const defaultHttpOptions: HttpOptions = {
  rateLimitPerMinute: 1200,
  requestTimeoutMs: 30_000,
  // Measured on a 100-row page (docs/BENCHMARKS.md, "Per-request overhead"): gzip 6 adds 0.8 times the cost of the
  // page, brotli 4 2.4 times; gzip 1 and brotli 1 about a third, for 35% and 19% more bytes than gzip 6 and brotli 4.
  compression: { threshold: 1024, gzipLevel: 1, brotliQuality: 1, cacheBytes: 32 * 1024 * 1024 },
  scanMaxBytes: 1024 * 1024 * 1024,
};

export async function buildApp({
  storage,
  logger = false,
  now,
  http = {},
  lifecycle = { draining: false },
  scanQueued,
}: AppDependencies): Promise<FastifyInstance> {
  const options = { ...defaultHttpOptions, ...http };
  const app = Fastify({
    logger:
      logger === false
        ? false
        : {
            ...(typeof logger === 'object' ? logger : {}),
            // Keys travel in this header; it must never reach a log line.
            redact: ['req.headers.authorization', 'req.headers.cookie', 'headers.authorization'],
          },
    schemaController: { compilersFactory: { buildSerializer: lazySerializers } },
    // One line per request, written in onResponse below, instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    // Tests and clients send `Content-Type: application/json` on GETs; there is no body to parse, so do not try.
    bodyLimit: 1024,
    // Path parameters (an asset id before `/sbom`, a download token) are as long as the request target may be: the
    // 414 for an over-long target is the one limit, not find-my-way's default of 100 characters per parameter.
    routerOptions: { maxParamLength: MAX_URL_LENGTH },
    // A request must arrive whole within the timeout, and a connection that stalls (client or server) for that long
    // is closed: slow clients cannot hold sockets, and no request hangs forever.
    requestTimeout: options.requestTimeoutMs,
    connectionTimeout: options.requestTimeoutMs,
    frameworkErrors,
    clientErrorHandler,
    // Requests that arrive on open connections while the app closes are answered normally (Fastify's own 503 has
    // neither the contract's shape nor Retry-After); the server stops accepting first (src/server.ts).
    return503OnClosing: false,
    // A request without Host gets the contract's 400 from the hook below rather than Node's empty one.
    http: { requireHostHeader: false },
    ...(options.https ? { https: { ...options.https, requireHostHeader: false } } : {}),
  } as FastifyServerOptions);
  app.setValidatorCompiler(validatorCompiler);
  registerErrorHandling(app);
  answerOutsideRoutes(app.server);
  app.addHook('onRequest', async (request, reply) => {
    reply.header('X-Request-Id', request.id);
    // While draining, each answer tells its client to reconnect, and so to reach another instance.
    if (lifecycle.draining) reply.header('Connection', 'close');
    requireHost(request);
    if (request.url.length > MAX_URL_LENGTH)
      throw apiError('uri_too_long', `the request target is longer than ${MAX_URL_LENGTH} characters`);
  });
  app.addHook('onResponse', async (request, reply) => {
    request.log.info(
      {
        tenantId: request.tenant?.tenantId,
        method: request.method,
        route: request.routeOptions.url,
        // A download link's token is a credential for its lifetime: it never reaches a log line either.
        url: redactTokens(request.url),
        status: reply.statusCode,
        durationMs: Math.round(reply.elapsedTime * 100) / 100,
      },
      'request',
    );
  });
  options.metrics?.instrument(app);

  // Security headers, helmet's as it computed them once (src/http/security-headers.ts); the content security policy is
  // left to /docs (swagger-ui sets its own) and /console/ (its own, src/http/console.ts); JSON needs none.
  const security = await securityHeaders();
  app.addHook('onRequest', (_request, reply, done) => {
    reply.headers(security);
    done();
  });
  // gzip or brotli when the client asks, at the levels tenant 200s use; those are compressed (and their compressed
  // bodies kept) by the caching hooks, which this plugin passes through: it serves the rest (the OpenAPI document,
  // /docs, errors).
  const { compression } = options;
  await app.register(compress, {
    threshold: compression.threshold,
    // Besides what mime-db calls compressible (text/csv among them): JSON, and the NDJSON of exports, which streams
    // through this plugin at the same levels (src/http/export.ts).
    customTypes: /^application\/(?:json|x-ndjson)(?:;|$)/,
    encodings: ['br', 'gzip'],
    brotliOptions: { params: { [zlib.BROTLI_PARAM_QUALITY]: compression.brotliQuality } },
    zlibOptions: { level: compression.gzipLevel },
  });
  await registerOpenApi(app);
  // The web console: static files with their own content security policy (src/http/console.ts).
  await consoleRoutes(app);
  await healthRoutes(app, { storage, lifecycle });
  if (options.metrics && options.metricsToken) {
    const { metrics } = options;
    const expected = Buffer.from(`Bearer ${options.metricsToken}`);
    app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
      const given = Buffer.from(request.headers.authorization ?? '');
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
        throw apiError(
          'unauthorized',
          'a valid metrics token is required: Authorization: Bearer <SECINV_METRICS_TOKEN>',
          undefined,
          { 'WWW-Authenticate': 'Bearer' },
        );
      }
      return reply.type(metrics.contentType).send(await metrics.text());
    });
  }

  const secret = await storage.cursorKey();
  const sbom = {
    storage,
    tokens: downloadTokens(secret),
    now: now ?? (() => new Date()),
    publicUrl: options.publicUrl,
  };
  await sbomDownloadRoute(app, sbom);

  await app.register(async (api) => {
    api.addHook('onRequest', authenticate(storage, now));
    if (options.rateLimitPerMinute > 0) {
      // Counted per key, after authentication and before parameters are read (an invalid request still counts).
      await api.register(rateLimit, {
        max: options.rateLimitPerMinute,
        timeWindow: 60_000,
        hook: 'preValidation',
        enableDraftSpec: true,
        keyGenerator: (request) => request.apiKeyId,
        errorResponseBuilder: (_request, context) =>
          apiError(
            'rate_limited',
            `more than ${context.max} requests per minute for this key; retry in ${context.after}`,
          ),
      });
    }
    // A finding's isOverdue moves with the clock, and so does a metric's current interval (docs/DESIGN.md §107).
    const dueEpoch = dueEpochs(storage);
    const metrics = new Set([FINDING_METRICS_PATH, REMEDIATION_METRICS_PATH]);
    registerCaching(api, {
      secret,
      serverVersion: serverFingerprint(),
      compression,
      timed: {
        urls: new Set([VULNERABILITIES_PATH, CHANGES_PATH, SCAN_CHANGES_PATH, ...metrics]),
        part: async (request) =>
          `${await dueEpoch(request.tenant)}${metrics.has(request.routeOptions.url ?? '') ? ` ${dayOf(Date.now())}` : ''}`,
      },
    });
    // Requests no kept body answered start their handlers in arrival order, a slice of time per turn of the event
    // loop, so that the loop accepts and reads between two slices however many requests wait (docs/DESIGN.md §116).
    const slice = timeSliced(HANDLER_SLICE_MS);
    api.addHook('preHandler', (_request, _reply, done) => slice(done));
    const cursors = cursorCodec(secret);
    await assetRoutes(api, { ...sbom, cursors });
    await sbomLinkRoute(api, sbom);
    await riskRoutes(api, { storage, cursors });
    await vulnerabilityRoutes(api, { storage, cursors });
    await changeRoutes(api, { storage, cursors });
    await metricRoutes(api, { storage });
    // A plugin of its own: its bodies are streams, parsed by no content-type parser of the others.
    await api.register(async (scans) =>
      scanRoutes(scans, {
        storage,
        cursors,
        maxBytes: options.scanMaxBytes,
        queued: scanQueued,
        now: now ?? (() => new Date()),
      }),
    );
  });

  for (const [url, allow] of [
    [SCANS_PATH, 'GET, HEAD, POST'],
    [SCAN_PATH, 'GET, HEAD'],
  ] as const) {
    app.route({
      method: allow.includes('POST') ? ['DELETE', 'PATCH', 'PUT', 'OPTIONS'] : [...OTHER_METHODS],
      url,
      schema: { hide: true },
      handler: async () => {
        throw apiError('method_not_allowed', `only ${allow} are allowed here`, undefined, { Allow: allow });
      },
    });
  }
  for (const url of API_PATHS) {
    app.route({
      method: [...OTHER_METHODS],
      url,
      schema: { hide: true },
      handler: async () => {
        throw apiError('method_not_allowed', 'only GET and HEAD are allowed here', undefined, { Allow: 'GET, HEAD' });
      },
    });
  }
  return app;
}
