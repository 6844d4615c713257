// The web console (console/, built by Vite into dist/console/ at `npm run build`): its files under /console/, the
// single page for each of its own paths, and a strict content security policy on all of it (docs/DESIGN.md §33).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import { apiError } from '../domain/errors.js';

export const CONSOLE_PREFIX = '/console/';

/** The built console: the same relative path from src/http (tests, tsx) and dist/http (the built server). */
export const CONSOLE_ROOT = fileURLToPath(new URL('../../dist/console/', import.meta.url));

/**
 * The console's own pages, answered with its one HTML page (the page reads its path and query); asset ids contain
 * slashes and colons, so an asset's page takes the rest of the path.
 */
const PAGES = ['risks', 'assets', 'assets/*', 'vulnerabilities', 'scans'];

/**
 * Scripts, styles, images and API calls from this origin only: no inline script or style, no eval, no plugin, no
 * frame of the console elsewhere, no form sent elsewhere.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

export async function consoleRoutes(app: FastifyInstance, root = CONSOLE_ROOT): Promise<void> {
  app.get('/console', { schema: { hide: true } }, async (_request, reply) => reply.redirect(CONSOLE_PREFIX, 308));
  if (!existsSync(`${root}/index.html`)) {
    // A checkout that was never built (`npm ci` builds it): say how to get it rather than a bare 404.
    app.get(`${CONSOLE_PREFIX}*`, { schema: { hide: true } }, async () => {
      throw apiError('not_found', 'the console is not built: run `npm run build`');
    });
    return;
  }
  // Its own scope: the reply decoration and the policy header stay on the console's routes.
  await app.register(async (scope) => {
    scope.addHook('onRequest', async (_request, reply) => {
      reply.header('Content-Security-Policy', CONSOLE_CSP);
    });
    await scope.register(fastifyStatic, {
      root,
      prefix: CONSOLE_PREFIX,
      // One route per built file, found at start: any other path under /console/ is the API's JSON 404.
      wildcard: false,
      index: 'index.html',
      cacheControl: false,
      // File names under static/ carry a hash of their content; the page itself must be revalidated.
      setHeaders: (reply, path) => {
        reply.header('Cache-Control', path.includes('/static/') ? 'public, max-age=31536000, immutable' : 'no-cache');
      },
      schemaHide: true,
    });
    for (const page of PAGES) {
      scope.get(`${CONSOLE_PREFIX}${page}`, { schema: { hide: true } }, async (_request, reply) =>
        reply.sendFile('index.html'),
      );
    }
  });
}
