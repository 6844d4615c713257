// One database for a test file, with the fixture inventory imported and a key per tenant: reports are ingested into it
// (at a fixed time, as `secinv ingest` would read them), read back through the API as a tenant, and its stored checks
// read straight from the database.
import { afterAll, beforeAll, expect } from 'vitest';
import type { IngestOptions, IngestResult } from '../../src/ingest/ingest.js';
import { fixture } from '../fixtures.js';
import { setupWithKeys, TENANT_A, TENANT_B, type TestContext } from '../helpers.js';
import { storedChecks, storedDocumentCounts, type StoredCheck } from './checks.js';
import { ingestTexts } from './run.js';

type Json = Record<string, unknown>;

export interface IngestSuite {
  ingest: (files: Record<string, string>, options?: Partial<IngestOptions>) => Promise<IngestResult>;
  /** A GET on the API as the tenant (A by default), answered 200. */
  api: (path: string, tenantId?: string) => Promise<Json>;
  /** The ETag of a GET on the API as the tenant (A by default), answered 200. */
  etag: (path: string, tenantId?: string) => Promise<string>;
  /** The tenant's stored checks (A by default), optionally of one asset. */
  checks: (tenantId?: string, assetId?: string) => Promise<StoredCheck[]>;
  /** The tenant's finding rows, document rows and orphaned documents (A by default). */
  documents: (tenantId?: string) => Promise<{ findings: number; documents: number; orphans: number }>;
}

/** Registers the file's beforeAll and afterAll. */
export function ingestSuite(): IngestSuite {
  let ctx: TestContext;
  let keys: Record<string, string>;
  beforeAll(async () => {
    const opened = await setupWithKeys(fixture, [TENANT_A, TENANT_B]);
    ctx = opened.ctx;
    keys = { [TENANT_A]: opened.keys[0], [TENANT_B]: opened.keys[1] };
  });
  afterAll(async () => ctx.close());
  return {
    ingest: (files, options = {}) => ingestTexts(ctx.storage, files, options),
    api: async (path, tenantId = TENANT_A) => {
      const res = await ctx.app.inject({ url: path, headers: { authorization: `Bearer ${keys[tenantId]}` } });
      expect(res.statusCode, res.body).toBe(200);
      return res.json<Json>();
    },
    etag: async (path, tenantId = TENANT_A) => {
      const res = await ctx.app.inject({ url: path, headers: { authorization: `Bearer ${keys[tenantId]}` } });
      expect(res.statusCode, res.body).toBe(200);
      return String(res.headers.etag);
    },
    checks: (tenantId = TENANT_A, assetId) => storedChecks(ctx.url, tenantId, assetId),
    documents: (tenantId = TENANT_A) => storedDocumentCounts(ctx.url, tenantId),
  };
}
