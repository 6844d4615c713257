// The console's files as the server answers them: the one page for each console path, the strict content security
// policy, cache headers by kind of file, and the API's own 404 beyond them. (What the page does: test/console/.)
import { readdirSync } from 'node:fs';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_CSP, CONSOLE_ROOT, consoleRoutes } from '../../src/http/console.js';
import { registerErrorHandling } from '../../src/http/errors.js';
import { setup, type TestContext } from '../helpers.js';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await setup();
});
afterAll(async () => ctx.close());

describe('the console', () => {
  it('answers its page for each of its paths, under a strict content security policy', async () => {
    for (const url of [
      '/console/',
      '/console/risks?severityLevels=CRITICAL',
      '/console/assets',
      '/console/assets/sirn%3Aassets%3Aa%2Fb',
      '/console/vulnerabilities?hasKev=true',
      '/console/scans?statuses=failed',
    ]) {
      const res = await ctx.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.body).toContain('<div id="app"></div>');
      expect(res.headers['content-security-policy']).toBe(CONSOLE_CSP);
      expect(res.headers['cache-control']).toBe('no-cache');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
    }
    expect(CONSOLE_CSP).toContain("script-src 'self'");
    expect(CONSOLE_CSP).not.toContain('unsafe-inline');
  });

  it('has no inline script, and its hashed files are cached for good', async () => {
    const page = (await ctx.app.inject({ method: 'GET', url: '/console/' })).body;
    expect(page).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(page).not.toMatch(/\sstyle=/);
    const files = readdirSync(`${CONSOLE_ROOT}/static`);
    expect(files.some((f) => f.endsWith('.js'))).toBe(true);
    for (const file of files) {
      const res = await ctx.app.inject({ method: 'GET', url: `/console/static/${file}` });
      expect(res.statusCode).toBe(200);
      expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      expect(res.headers['content-security-policy']).toBe(CONSOLE_CSP);
    }
  });

  it('redirects /console to /console/, and answers any other path with the API 404', async () => {
    const bare = await ctx.app.inject({ method: 'GET', url: '/console?x=1' });
    expect(bare.statusCode).toBe(308);
    expect(bare.headers.location).toBe('/console/');
    for (const url of ['/console/nope', '/console/static/missing.js', '/console/risks/1']) {
      const res = await ctx.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(404);
      expect(res.json()).toEqual({ errors: [{ code: 'not_found', message: 'no such resource' }] });
    }
  });

  it('says how to build it when it is not built', async () => {
    const app = Fastify();
    registerErrorHandling(app);
    await consoleRoutes(app, '/nonexistent/console/');
    const res = await app.inject({ method: 'GET', url: '/console/risks' });
    expect(res.statusCode).toBe(404);
    expect(res.json().errors[0].message).toMatch(/npm run build/);
    await app.close();
  });
});
