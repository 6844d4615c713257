// The OpenAPI document (/openapi.json, committed as openapi.json) and the reference page (/docs): complete, in step
// with the query definitions that validate requests, and usable without internet access.
import { findingMetricsQuery, remediationMetricsQuery } from '../../src/modules/metrics/schemas.js';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorStatus } from '../../src/domain/errors.js';
import { openApiText } from '../../src/modules/openapi/routes.js';
import type { ParamSpec } from '../../src/domain/query.js';
import type { QueryDefinition } from '../../src/http/query.js';
import { getAssetQuery, listAssetsQuery } from '../../src/modules/assets/schemas.js';
import { sbomLinkQuery } from '../../src/modules/assets/sbom.js';
import { listRisksQuery } from '../../src/modules/risks/schemas.js';
import { listVulnerabilitiesQuery } from '../../src/modules/vulnerabilities/schemas.js';
import { getScanQuery, listScansQuery, uploadScanQuery } from '../../src/modules/scans/schemas.js';
import { listChangesQuery, scanChangesQuery } from '../../src/modules/changes/schemas.js';
import { setup, type TestContext } from '../helpers.js';

interface Parameter {
  in: string;
  name: string;
  required: boolean;
  description?: string;
  schema: Record<string, unknown>;
  example?: unknown;
}
interface Response {
  description: string;
  content?: Record<string, { schema: Record<string, unknown>; example?: unknown; examples?: unknown }>;
}
interface Operation {
  operationId: string;
  summary: string;
  description: string;
  tags: string[];
  parameters: Parameter[];
  responses: Record<string, Response>;
}
interface Document {
  openapi: string;
  info: { title: string; version: string; description: string; license: { name: string } };
  servers: { url: string }[];
  tags: { name: string; description: string }[];
  security: Record<string, string[]>[];
  paths: Record<string, Record<string, Operation>>;
  components: {
    securitySchemes: Record<string, Record<string, string>>;
    schemas: Record<string, Record<string, unknown>>;
  };
}

const SBOM_DOWNLOAD = '/v1/sbom/{token}';
const REGENERATE =
  'openapi.json is out of date: run `node --import tsx scripts/write-openapi.ts` and commit openapi.json';

const operations: Record<
  string,
  {
    path: string;
    query: QueryDefinition<Record<string, ParamSpec>>;
    notFound: boolean;
    exports: boolean;
    method?: 'get' | 'post';
    /** It reads the change log from a cursor retention may pass (410). */
    gone?: boolean;
  }
> = {
  listAssets: { path: '/v1/tenant/assets', query: listAssetsQuery, notFound: false, exports: true },
  getAsset: { path: '/v1/tenant/assets/{assetId}', query: getAssetQuery, notFound: true, exports: false },
  getAssetSbom: { path: '/v1/tenant/assets/{assetId}/sbom', query: sbomLinkQuery, notFound: true, exports: false },
  listRisks: { path: '/v1/tenant/risks', query: listRisksQuery, notFound: false, exports: true },
  listVulnerabilities: {
    path: '/v1/tenant/vulnerabilities',
    query: listVulnerabilitiesQuery,
    notFound: false,
    exports: true,
  },
  uploadScan: { path: '/v1/tenant/scans', query: uploadScanQuery, notFound: false, exports: false, method: 'post' },
  listScans: { path: '/v1/tenant/scans', query: listScansQuery, notFound: false, exports: false },
  getScan: { path: '/v1/tenant/scans/{id}', query: getScanQuery, notFound: true, exports: false },
  listChanges: { path: '/v1/tenant/changes', query: listChangesQuery, notFound: false, exports: true, gone: true },
  listScanChanges: {
    path: '/v1/tenant/scans/{id}/changes',
    query: scanChangesQuery,
    notFound: true,
    exports: false,
    gone: true,
  },
  getFindingMetrics: {
    path: '/v1/tenant/metrics/findings',
    query: findingMetricsQuery,
    notFound: false,
    exports: false,
  },
  getRemediationMetrics: {
    path: '/v1/tenant/metrics/remediation',
    query: remediationMetricsQuery,
    notFound: false,
    exports: false,
  },
};

let ctx: TestContext;
let doc: Document;

beforeAll(async () => {
  ctx = await setup();
  await ctx.app.ready();
  doc = ctx.app.swagger() as unknown as Document;
});
afterAll(async () => ctx.close());

const operation = (operationId: string): Operation => {
  const { path, method = 'get' } = operations[operationId]!;
  const found = doc.paths[path]?.[method];
  if (!found) throw new Error(`no ${method.toUpperCase()} ${path} in the document`);
  return found;
};

describe('openapi.json', () => {
  it('is committed, byte-identical to the generated document', () => {
    const committed = readFileSync(new URL('../../openapi.json', import.meta.url), 'utf8');
    const generated = openApiText(ctx.app);
    expect(JSON.parse(committed), REGENERATE).toEqual(JSON.parse(generated));
    expect(committed === generated, REGENERATE).toBe(true);
  });

  it('is served at /openapi.json without a key', async () => {
    const res = await ctx.app.inject({ url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.json()).toEqual(doc);
  });
});

describe('the document', () => {
  it('is OpenAPI 3.1 with info, servers, tags, the GET operations of a key and the SBOM download, nothing else', () => {
    expect(doc.openapi).toBe('3.1.0');
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(doc.info).toMatchObject({
      title: 'Tenant Security Inventory API',
      version: pkg.version,
      license: { name: 'Apache-2.0' },
    });
    expect(doc.info.description.length).toBeGreaterThan(0);
    expect(doc.servers.length).toBeGreaterThan(0);
    expect(Object.keys(doc.paths).sort()).toEqual(
      [...new Set(Object.values(operations).map((o) => o.path)), SBOM_DOWNLOAD].sort(),
    );
    for (const path of Object.keys(doc.paths)) {
      const methods = Object.values(operations)
        .filter((o) => o.path === path)
        .map((o) => o.method ?? 'get');
      expect(Object.keys(doc.paths[path]!).sort(), path).toEqual(path === SBOM_DOWNLOAD ? ['get'] : methods.sort());
    }
    const tagNames = doc.tags.map((t) => t.name);
    for (const tag of doc.tags) expect(tag.description, tag.name).not.toBe('');
    for (const operationId of Object.keys(operations)) {
      const op = operation(operationId);
      expect(op.operationId).toBe(operationId);
      expect(op.summary, operationId).not.toBe('');
      expect(op.description, operationId).not.toBe('');
      expect(op.tags.length, operationId).toBeGreaterThan(0);
      for (const tag of op.tags) expect(tagNames, operationId).toContain(tag);
    }
  });

  it('requires the bearer key on every operation but the SBOM download, whose signed link is its credential', () => {
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.components.securitySchemes.bearerAuth!.description).toContain('secinv_');
    expect(doc.security).toEqual([{ bearerAuth: [] }]);
    for (const operationId of Object.keys(operations))
      expect((operation(operationId) as { security?: unknown }).security, operationId).toBeUndefined();
    expect((doc.paths[SBOM_DOWNLOAD]!.get as { security?: unknown }).security).toEqual([]);
  });

  it('documents the SBOM download: the CycloneDX media type, 403 for a bad link, 404 for a vanished asset', () => {
    const { responses, operationId } = doc.paths[SBOM_DOWNLOAD]!.get!;
    expect(operationId).toBe('downloadSbom');
    expect(Object.keys(responses).sort()).toEqual(['200', '403', '404']);
    expect(Object.keys(responses['200']!.content ?? {})).toEqual(['application/vnd.cyclonedx+json; version=1.6']);
    for (const status of ['403', '404'])
      expect(responses[status]!.content?.['application/json']?.schema).toEqual({ $ref: '#/components/schemas/Error' });
  });

  it("documents every query parameter of each operation's definition, with its description and limits", () => {
    for (const [operationId, { query }] of Object.entries(operations)) {
      const documented = operation(operationId).parameters.filter((p) => p.in === 'query');
      expect(documented.map((p) => p.name).sort(), operationId).toEqual(Object.keys(query.params).sort());
      for (const parameter of documented) {
        const where = `${operationId} ${parameter.name}`;
        const spec = query.params[parameter.name]!;
        expect(parameter.required, where).toBe(false);
        expect(parameter.description?.trim(), where).toBeTruthy();
        expect(parameter.schema.description, where).toBeUndefined();
        if (spec.kind === 'integer' || spec.kind === 'decimal') {
          expect(parameter.description, where).toContain(String(spec.min));
          expect(parameter.description, where).toContain(String(spec.max));
        }
        if (spec.kind === 'list' && spec.maxItems !== undefined)
          expect(parameter.description, where).toContain(`At most ${spec.maxItems} items`);
        if (spec.kind === 'list' && spec.item.type === 'enum')
          for (const v of spec.item.values) expect(parameter.description, where).toContain(v);
        if (spec.kind === 'enum') for (const v of spec.values) expect(parameter.description, where).toContain(v);
        if ('default' in spec && spec.default !== undefined)
          expect(parameter.schema.default, where).toBe(String(spec.default));
      }
    }
  });

  it('shows the asset id as a required path parameter {assetId}, raw or percent-encoded', () => {
    const pathParameters = operation('getAsset').parameters.filter((p) => p.in === 'path');
    expect(pathParameters).toHaveLength(1);
    expect(pathParameters[0]).toMatchObject({ name: 'assetId', required: true, schema: { type: 'string' } });
    expect(pathParameters[0]!.description).toMatch(/percent-encoded/);
    for (const operationId of ['listAssets', 'listRisks', 'listVulnerabilities']) {
      expect(
        operation(operationId).parameters.filter((p) => p.in === 'path'),
        operationId,
      ).toEqual([]);
    }
  });

  it('gives some parameters an example, each one the request parser accepts', () => {
    for (const [operationId, { query }] of Object.entries(operations)) {
      const examples = operation(operationId).parameters.filter((p) => p.in === 'query' && p.example !== undefined);
      // The SBOM link takes no query parameter.
      if (Object.keys(query.params).length > 0) expect(examples.length, operationId).toBeGreaterThan(0);
      const all = Object.fromEntries(examples.map((p) => [p.name, p.example]));
      expect(() => query.parse(all), `${operationId} ${JSON.stringify(all)}`).not.toThrow();
    }
  });

  it('documents the 200 body with an example, and every error response with the Error schema', () => {
    for (const [operationId, { notFound, exports, method, gone }] of Object.entries(operations)) {
      const { responses } = operation(operationId);
      const upload = method === 'post';
      const expected = [
        '200',
        ...(upload ? ['202'] : []),
        '400',
        '401',
        '403',
        ...(notFound ? ['404'] : []),
        '405',
        ...(exports ? ['406'] : []),
        ...(upload ? ['409', '413', '415'] : []),
        ...(gone ? ['410'] : []),
        '429',
        '500',
        '503',
      ];
      expect(Object.keys(responses).sort(), operationId).toEqual(expected);
      const ok = responses['200']!.content?.['application/json'];
      expect(ok?.schema, operationId).toBeDefined();
      expect(ok?.example ?? ok?.examples, operationId).toBeDefined();
      // A list that exports documents its two download media types beside JSON.
      expect(Object.keys(responses['200']!.content ?? {}).sort(), operationId).toEqual(
        exports ? ['application/json', 'application/x-ndjson', 'text/csv'] : ['application/json'],
      );
      for (const status of expected.filter((s) => s !== '200' && s !== '202')) {
        const response = responses[status]!;
        expect(response.description, `${operationId} ${status}`).not.toMatch(/^(Default Response)?$/);
        expect(response.content?.['application/json']?.schema, `${operationId} ${status}`).toEqual({
          $ref: '#/components/schemas/Error',
        });
      }
    }
  });

  it('has an Error schema of `{ errors: [{ code, field?, message }] }` with every error code', () => {
    const error = doc.components.schemas.Error as {
      required: string[];
      properties: { errors: { items: { required: string[]; properties: Record<string, { enum?: string[] }> } } };
    };
    expect(error.required).toEqual(['errors']);
    const item = error.properties.errors.items;
    expect(Object.keys(item.properties).sort()).toEqual(['code', 'field', 'message']);
    expect(item.required.sort()).toEqual(['code', 'message']);
    expect(item.properties.code!.enum!.sort()).toEqual(Object.keys(errorStatus).sort());
  });

  it('keeps the resource schemas as named components', () => {
    for (const name of ['Asset', 'Integration', 'Risk', 'Vulnerability', 'PageMeta', 'CursorMeta', 'Error']) {
      expect(doc.components.schemas[name], name).toBeDefined();
    }
    expect(JSON.stringify(doc)).not.toMatch(/"#\/components\/schemas\/def-\d+"/);
  });
});

describe('/docs', () => {
  for (const url of ['/docs', '/docs/']) {
    it(`${url} is served without a key and loads only local assets`, async () => {
      const res = await ctx.app.inject({ url });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      const html = res.body;
      expect(html).not.toMatch(/https?:\/\//i);
      const assets = [...html.matchAll(/\b(?:href|src)="([^"]+)"/g)].map((m) => m[1]!);
      expect(assets.some((a) => a.endsWith('.js'))).toBe(true);
      expect(assets.some((a) => a.endsWith('.css'))).toBe(true);
      for (const asset of assets) {
        expect(asset, asset).not.toMatch(/^(?:[a-z][a-z0-9+.-]*:|\/\/)/i);
        const resolved = new URL(asset, `http://localhost${url}`).pathname;
        const loaded = await ctx.app.inject({ url: resolved });
        expect(loaded.statusCode, resolved).toBe(200);
        expect(loaded.rawPayload.length, resolved).toBeGreaterThan(0);
      }
    });
  }

  it('points the page at the local document and at no online validator', async () => {
    const res = await ctx.app.inject({ url: '/docs/static/swagger-initializer.js' });
    expect(res.statusCode).toBe(200);
    expect(res.body).toMatch(/validatorUrl: null/);
    expect(res.body).toMatch(/url: resolveUrl\('\.\/json'\)/);
    // No string literal holds an absolute or protocol-relative URL (a comment linking to a web page is harmless).
    expect(res.body).not.toMatch(/["'`]\s*(?:[a-z][a-z0-9+.-]*:)?\/\//i);
    const json = await ctx.app.inject({ url: '/docs/json' });
    expect(json.statusCode).toBe(200);
    expect(json.json()).toEqual(doc);
  });
});
