// Streamed exports of the lists (NDJSON and CSV): the whole filtered, sorted result, equal to every page concatenated,
// chosen by `format` or by Accept; the request rules of exports; CSV that a spreadsheet reads as written; the headers,
// tags, compression and rate limit of a download.
import { get as httpGet } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { Asset } from '../../src/domain/assets.js';
import { riskFieldNames } from '../../src/domain/risks.js';
import { Vulnerability } from '../../src/domain/vulnerabilities.js';
import { buildApp } from '../../src/app.js';
import { UnavailableError } from '../../src/domain/errors.js';
import { csvRow } from '../../src/http/csv.js';
import { EXPORT_BATCH } from '../../src/http/export.js';
import type { Storage } from '../../src/storage/index.js';
import { sharedSetup, TENANT_A, TENANT_B } from '../helpers.js';
import { A1 } from '../fixtures.js';
import { ASSETS, cell, csvRows, join, ndjsonItems, records, RISKS, type Item } from './export-records.js';

const shared = sharedSetup(records, [TENANT_A, TENANT_B]);

const get = (url: string, headers: Record<string, string> = {}, key = shared.keys[0]) =>
  shared.ctx.app.inject({ url, headers: { authorization: `Bearer ${key}`, ...headers } });

const json = async <T>(url: string): Promise<T> => {
  const res = await get(url);
  expect(res.statusCode, res.body).toBe(200);
  return res.json<T>();
};

/** Every numbered page of a list, concatenated (pages of 997 findings or assets: the export's batches are 1,000). */
async function allPages(path: string, query: string): Promise<Item[]> {
  const items: Item[] = [];
  for (let page = 1; ; page += 1) {
    const body = await json<{ data: Item[]; meta: { hasNextPage: boolean } }>(
      join(path, query, `perPage=${path.endsWith('risks') ? 97 : 997}&page=${page}`),
    );
    items.push(...body.data);
    if (!body.meta.hasNextPage) return items;
  }
}

/** Every batch of the risk list, following its cursor, concatenated. */
async function allRiskBatches(query: string): Promise<Item[]> {
  const items: Item[] = [];
  let cursor: string | null = null;
  do {
    const body: { data: Item[]; meta: { cursor: string | null } } = await json(
      join('/v1/tenant/risks', query, `perPage=97${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`),
    );
    items.push(...body.data);
    cursor = body.meta.cursor;
  } while (cursor !== null);
  return items;
}

/** The CSV an export must send, byte for byte: csvRow (the cells' definition) over the paged items. */
const expectCsvBytes = (raw: Buffer, columns: readonly string[], items: readonly Item[]) =>
  expect(
    raw.equals(Buffer.from(`\uFEFF${[columns, ...items.map((i) => columns.map((c) => i[c]))].map(csvRow).join('')}`)),
  ).toBe(true);

async function exported(url: string, headers: Record<string, string> = {}) {
  const res = await get(url, headers);
  expect(res.statusCode, res.body.slice(0, 500)).toBe(200);
  return res;
}

const VULNERABILITY_QUERIES = [
  '',
  'sortBy=firstObservedAt&sortOrder=ASC',
  'sortBy=hasKev&severityLevels=critical,HIGH,LOW',
  'isExempted=true',
  `assetIds=${encodeURIComponent(A1)}&sortBy=lastObservedAt`,
  'packageName=openssl&hasVendorFix=true',
  'vulnerabilityIds=CVE-NONE',
];

describe('vulnerability export', () => {
  it.each(VULNERABILITY_QUERIES)('NDJSON and CSV equal every page concatenated: "%s"', async (query) => {
    const pages = await allPages('/v1/tenant/vulnerabilities', query);
    const ndjson = await exported(join('/v1/tenant/vulnerabilities', query, 'format=ndjson'));
    expect(ndjson.headers['content-type']).toBe('application/x-ndjson; charset=utf-8');
    expect(ndjsonItems(ndjson.body)).toEqual(pages);

    const csv = await exported(join('/v1/tenant/vulnerabilities', query, 'format=csv'));
    expect(csv.headers['content-type']).toBe('text/csv; charset=utf-8; header=present');
    const columns = Object.keys(Vulnerability.properties);
    expect(csvRows(csv.rawPayload)).toEqual([columns, ...pages.map((item) => columns.map((c) => cell(item[c])))]);
    expectCsvBytes(csv.rawPayload, columns, pages);
  });

  it('exports the whole result across batches, each finding once', async () => {
    const items = ndjsonItems((await exported('/v1/tenant/vulnerabilities?format=ndjson')).body);
    const keys = new Set(items.map((f) => `${String(f.assetId)}|${String(f.vulnerabilityId)}`));
    expect(items.length).toBeGreaterThan(EXPORT_BATCH * 2);
    expect(keys.size).toBe(items.length);
  });

  it('CSV: formula-like text is prefixed, quotes, commas and line breaks survive, numbers stay numbers', async () => {
    const rows = csvRows((await exported('/v1/tenant/vulnerabilities?format=csv')).rawPayload);
    const [header, ...body] = rows;
    const title = header!.indexOf('title');
    // (The shared fixture's findings have no title.)
    const titles = new Set(body.map((row) => row[title]).filter((text) => text !== ''));
    expect([...titles].sort()).toEqual(
      ['\'=HYPERLINK("http://x","y")', "'+1+2", "'-2+3", "'@SUM(A1)", "'\tcmd", "'\rcmd", 'a,b "c"\nd', 'ünï ✓'].sort(),
    );
    const row = body[0]!;
    expect(row[header!.indexOf('severityLevelValue')]).toMatch(/^[0-5]$/);
    expect(row[header!.indexOf('hasKev')]).toMatch(/^(true|false)$/);
    expect(row[header!.indexOf('schemaVersion')]).toBe('');
    expect(JSON.parse(row[header!.indexOf('exemptions')]!)).toEqual([]);
  });

  it('Accept chooses the format; the format parameter wins over Accept', async () => {
    const csv = await exported('/v1/tenant/vulnerabilities?severityLevels=LOW', { accept: 'text/csv' });
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    const weighted = await exported('/v1/tenant/vulnerabilities?severityLevels=LOW', {
      accept: 'application/x-ndjson;q=0.5, text/csv;q=0.9, application/xml',
    });
    expect(weighted.body).toBe(csv.body);
    const ndjson = await exported('/v1/tenant/vulnerabilities?severityLevels=LOW', {
      accept: 'application/x-ndjson',
    });
    expect(ndjson.headers['content-type']).toMatch(/^application\/x-ndjson/);
    for (const accept of ['*/*', 'application/json', 'application/*, text/csv;q=0.1', 'text/html, */*;q=0.1']) {
      const page = await exported('/v1/tenant/vulnerabilities?severityLevels=LOW', { accept });
      expect(page.headers['content-type'], accept).toBe('application/json; charset=utf-8');
    }
    const paged = await exported('/v1/tenant/vulnerabilities?severityLevels=LOW&format=json', { accept: 'text/csv' });
    expect(paged.json<{ meta: object }>().meta).toHaveProperty('total');
    const forced = await exported('/v1/tenant/vulnerabilities?severityLevels=LOW&format=CSV', {
      accept: 'application/xml',
    });
    expect(forced.body).toBe(csv.body);
  });

  it('a download: Content-Disposition with the date, an ETag of its own, one request of the rate limit', async () => {
    const before = await get('/v1/tenant/vulnerabilities?perPage=1');
    const res = await exported('/v1/tenant/vulnerabilities?format=csv');
    expect(res.headers['content-disposition']).toMatch(
      /^attachment; filename="vulnerabilities-\d{4}-\d{2}-\d{2}\.csv"$/,
    );
    expect(res.headers.vary).toBe('Authorization, Accept, Accept-Encoding');
    // The export read several batches and counted once.
    expect(Number(res.headers['ratelimit-remaining'])).toBe(Number(before.headers['ratelimit-remaining']) - 1);

    const etag = res.headers.etag as string;
    expect(etag).toMatch(/^W\/"/);
    expect((await get('/v1/tenant/vulnerabilities?format=csv', { 'if-none-match': etag })).statusCode).toBe(304);
    // CSV asked through Accept is the same entity; the same query paged or as NDJSON is another one, with another tag.
    const byAccept = await get('/v1/tenant/vulnerabilities', { accept: 'text/csv' });
    expect(byAccept.headers.etag).toBe(etag);
    const page = await get('/v1/tenant/vulnerabilities');
    const asNdjson = await get('/v1/tenant/vulnerabilities?format=ndjson');
    expect(new Set([etag, page.headers.etag, asNdjson.headers.etag]).size).toBe(3);
    expect(
      (await get('/v1/tenant/vulnerabilities', { accept: 'text/csv', 'if-none-match': page.headers.etag as string }))
        .statusCode,
    ).toBe(200);
  });

  it('compressed as it streams when the client asks', async () => {
    const plain = await exported('/v1/tenant/vulnerabilities?format=ndjson');
    for (const url of ['/v1/tenant/vulnerabilities?format=ndjson', '/v1/tenant/vulnerabilities?format=csv']) {
      const gzipped = await exported(url, { 'accept-encoding': 'gzip' });
      expect(gzipped.headers['content-encoding']).toBe('gzip');
      const identity = url.endsWith('ndjson') ? plain.rawPayload : (await exported(url)).rawPayload;
      expect(gunzipSync(gzipped.rawPayload).equals(identity)).toBe(true);
      expect(gzipped.rawPayload.length).toBeLessThan(identity.length / 3);
    }
  });

  it('HEAD answers the headers of the download without reading it', async () => {
    const res = await shared.ctx.app.inject({
      method: 'HEAD',
      url: '/v1/tenant/vulnerabilities?format=ndjson',
      headers: { authorization: `Bearer ${shared.keys[0]}` },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/x-ndjson; charset=utf-8');
    expect(res.headers['content-disposition']).toMatch(/^attachment; filename="vulnerabilities-/);
    expect(res.body).toBe('');
  });

  it("another tenant's key exports that tenant's findings only", async () => {
    const b = ndjsonItems((await get('/v1/tenant/vulnerabilities?format=ndjson', {}, shared.keys[1])).body);
    expect(b.length).toBeGreaterThan(0);
    expect(b.every((f) => f.tenantId === TENANT_B)).toBe(true);
  });
});

describe('risk export', () => {
  const QUERIES = [
    '',
    'sortBy=score&sortOrder=asc',
    'include=primaryAsset,integration&severityLevels=CRITICAL',
    'fields=score,id,description&include=integration',
    'fields=id',
  ];

  it.each(QUERIES)('NDJSON and CSV equal every cursor batch concatenated: "%s"', async (query) => {
    const batches = await allRiskBatches(query);
    expect(batches.length).toBeGreaterThan(0);
    const ndjson = await exported(join('/v1/tenant/risks', query, 'format=ndjson'));
    expect(ndjson.headers['content-disposition']).toMatch(/^attachment; filename="risks-\d{4}-\d{2}-\d{2}\.ndjson"$/);
    expect(ndjsonItems(ndjson.body)).toEqual(batches);

    const csv = await exported(join('/v1/tenant/risks', query, 'format=csv'));
    const fields = new URLSearchParams(query).get('fields')?.split(',');
    const include = new URLSearchParams(query).get('include')?.split(',') ?? [];
    // Columns in the order of the contract, whatever the order of `fields`; then the embeds.
    const columns = [
      ...riskFieldNames.filter((name) => fields?.includes(name) ?? true),
      ...['primaryAsset', 'integration'].filter((name) => include.includes(name)),
    ];
    expect(csvRows(csv.rawPayload)).toEqual([columns, ...batches.map((item) => columns.map((c) => cell(item[c])))]);
    expectCsvBytes(csv.rawPayload, columns, batches);
  });

  it('exports more risks than one batch reads', async () => {
    expect(ndjsonItems((await exported('/v1/tenant/risks?format=ndjson')).body).length).toBeGreaterThan(RISKS);
  });
});

describe('asset export', () => {
  const QUERIES = [
    '',
    'sortBy=id&sortOrder=DESC',
    'sortBy=riskScore',
    'sortBy=riskScore&sortOrder=DESC',
    'sortBy=name&sortOrder=DESC&providers=AWS',
    'sortBy=region',
    'sortBy=vulnerabilityScore&sortOrder=DESC',
    'sortBy=firstObservedAt&regions=eu-west-1,eu-west-2',
    'query=cmd&sortBy=riskScore',
    'ids=nothing',
  ];

  it.each(QUERIES)('NDJSON and CSV equal every page concatenated: "%s"', async (query) => {
    const pages = await allPages('/v1/tenant/assets', query);
    const ndjson = await exported(join('/v1/tenant/assets', query, 'format=ndjson'));
    expect(ndjson.headers['content-disposition']).toMatch(/^attachment; filename="assets-\d{4}-\d{2}-\d{2}\.ndjson"$/);
    expect(ndjsonItems(ndjson.body)).toEqual(pages);

    const csv = await exported(join('/v1/tenant/assets', query, 'format=csv'));
    const columns = Object.keys(Asset.properties);
    expect(csvRows(csv.rawPayload)).toEqual([columns, ...pages.map((item) => columns.map((c) => cell(item[c])))]);
    expectCsvBytes(csv.rawPayload, columns, pages);
  });

  it('exports more assets than one batch reads, each once', async () => {
    const items = ndjsonItems((await exported('/v1/tenant/assets?format=ndjson&sortBy=riskScore')).body);
    expect(items.length).toBeGreaterThan(ASSETS);
    expect(new Set(items.map((a) => a.id)).size).toBe(items.length);
  });

  it('page and perPage with an export are 400', async () => {
    const res = await get('/v1/tenant/assets?page=2&perPage=10', { accept: 'text/csv' });
    expect(res.statusCode).toBe(400);
    expect(res.json<{ errors: { field: string }[] }>().errors.map((e) => e.field)).toEqual(['page', 'perPage']);
  });
});

describe('exports: bad input', () => {
  const problems = async (url: string, headers: Record<string, string> = {}) => {
    const res = await get(url, headers);
    expect(res.statusCode, res.body).toBe(400);
    return res.json<{ errors: { code: string; field?: string; message: string }[] }>().errors;
  };
  const notApplicable = (field: string, format: string) => ({
    code: 'invalid_parameter',
    field,
    message: `${field} does not apply to an export (format ${format}), which sends every matching record`,
  });

  it('page, perPage, cursor and includeTotal with an export are 400, each named, with the other problems', async () => {
    const cursor = (await json<{ meta: { cursor: string } }>('/v1/tenant/vulnerabilities?perPage=1')).meta.cursor;
    expect(
      await problems(
        `/v1/tenant/vulnerabilities?format=csv&perPage=10&includeTotal=false&cursor=${encodeURIComponent(cursor)}&hasKev=maybe`,
      ),
    ).toEqual([
      { code: 'invalid_parameter', field: 'hasKev', message: 'hasKev must be true or false' },
      notApplicable('perPage', 'csv'),
      notApplicable('cursor', 'csv'),
      notApplicable('includeTotal', 'csv'),
    ]);
    expect(await problems('/v1/tenant/vulnerabilities?page=2', { accept: 'application/x-ndjson' })).toEqual([
      notApplicable('page', 'ndjson'),
    ]);
    expect(await problems('/v1/tenant/risks?perPage=5&format=ndjson')).toEqual([notApplicable('perPage', 'ndjson')]);
    expect(await problems('/v1/tenant/risks?perPage=5', { accept: 'text/csv' })).toEqual([
      notApplicable('perPage', 'csv'),
    ]);
  });

  it('format=xml is 400 naming the formats', async () => {
    for (const path of ['/v1/tenant/vulnerabilities', '/v1/tenant/risks', '/v1/tenant/assets'])
      expect(await problems(`${path}?format=xml`)).toEqual([
        { code: 'invalid_parameter', field: 'format', message: 'format must be one of json, ndjson, csv' },
      ]);
  });

  it('an Accept with only unsupported types is 406 listing the supported ones', async () => {
    for (const accept of ['application/xml', 'text/html, image/*', 'application/json;q=0'])
      for (const path of ['/v1/tenant/vulnerabilities', '/v1/tenant/risks', '/v1/tenant/assets']) {
        const res = await get(path, { accept });
        expect(res.statusCode, `${path} ${accept}`).toBe(406);
        expect(res.json()).toEqual({
          errors: [
            {
              code: 'not_acceptable',
              message:
                'Accept names no media type of this list; it answers application/json, application/x-ndjson, text/csv (or use the format parameter: json, ndjson, csv)',
            },
          ],
        });
      }
    // Authentication still comes first.
    expect((await get('/v1/tenant/vulnerabilities', { accept: 'application/xml' }, 'secinv_nope')).statusCode).toBe(
      401,
    );
  });
});

/** The API's storage, with `before` called before each vulnerability batch an export reads (through its snapshot). */
const readingExports = (before: () => void): Storage => ({
  ...shared.ctx.apiStorage,
  openSnapshot: async (scope) => {
    const snapshot = await shared.ctx.apiStorage.openSnapshot(scope);
    return (
      snapshot && {
        ...snapshot,
        listVulnerabilities: async (...args) => {
          before();
          return snapshot.listVulnerabilities(...args);
        },
      }
    );
  },
});

describe('exports: a database failure', () => {
  /** The app over the API storage, with the findings read failing at the given read (1 = the first batch). */
  async function failingAt(read: number) {
    let reads = 0;
    return buildApp({
      storage: readingExports(() => {
        reads += 1;
        if (reads === read) throw new UnavailableError('the connection was lost');
      }),
    });
  }

  it('before the first byte is an ordinary 503', async () => {
    const app = await failingAt(1);
    try {
      const res = await app.inject({
        url: '/v1/tenant/vulnerabilities?format=csv',
        headers: { authorization: `Bearer ${shared.keys[0]}` },
      });
      expect(res.statusCode).toBe(503);
      expect(res.json<{ errors: { code: string }[] }>().errors[0]!.code).toBe('unavailable');
    } finally {
      await app.close();
    }
  });

  // The third read is one read ahead, while the second batch is sent.
  it.each([2, 3])('mid-stream (read %i) cuts the response off: never a complete-looking body', async (read) => {
    const app = await failingAt(read);
    try {
      await expect(
        app.inject({
          url: '/v1/tenant/vulnerabilities?format=ndjson',
          headers: { authorization: `Bearer ${shared.keys[0]}` },
        }),
      ).rejects.toThrow(/destroyed before completion/);
    } finally {
      await app.close();
    }
  });
});

describe('exports: the first bytes', () => {
  it('are written before the second batch is read (the socket is not held corked by the reads that follow)', async () => {
    let socket: Socket | undefined;
    const written: number[] = [];
    const app = await buildApp({
      storage: readingExports(() => {
        // Bytes the socket has passed to the system: written, less those still held in its buffer (corked).
        written.push(socket === undefined ? -1 : socket.bytesWritten - socket.writableLength);
      }),
    });
    app.addHook('onRequest', async (request) => {
      socket = request.raw.socket;
    });
    try {
      await app.listen({ host: '127.0.0.1', port: 0 });
      const { port } = app.server.address() as AddressInfo;
      const body = await new Promise<Buffer>((resolve, reject) => {
        const chunks: Buffer[] = [];
        httpGet(
          {
            host: '127.0.0.1',
            port,
            path: '/v1/tenant/vulnerabilities?format=csv',
            headers: { authorization: `Bearer ${shared.keys[0]}` },
          },
          (res) => {
            res.on('data', (chunk: Buffer) => chunks.push(chunk));
            res.on('end', () => resolve(Buffer.concat(chunks)));
          },
        ).on('error', reject);
      });
      expect(written.length).toBeGreaterThanOrEqual(3);
      // Nothing sent before the first read; the header row and the first batch's rows before the second.
      expect(written[0]).toBe(0);
      const firstBatch = csvRows(body)
        .slice(0, 101)
        .reduce((bytes, row) => bytes + row.join(',').length, 0);
      expect(written[1]).toBeGreaterThan(firstBatch);
    } finally {
      await app.close();
    }
  });
});
