// The typed client against a real server on a real database (each dialect): every operation, the iterators over every
// record, the exports, and the errors as the server sends them. Records and metas are checked against the TypeBox
// schemas the server answers with, so a change on either side fails here.
import { Value } from 'typebox/value';
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  ASSETS_PATH,
  createClient,
  RISKS_PATH,
  SecinvApiError,
  SecinvConnectionError,
  VULNERABILITIES_PATH,
  type AssetListParams,
  type RiskItem,
  type RiskListParams,
  type VulnerabilityListParams,
} from '../../src/client/index.js';
import { Asset, listAssetsSpec } from '../../src/domain/assets.js';
import { listRisksSpec, Risk as RiskSchema } from '../../src/domain/risks.js';
import { listVulnerabilitiesSpec, Vulnerability } from '../../src/domain/vulnerabilities.js';
import { ASSET_PATH, ASSETS_PATH as SERVER_ASSETS } from '../../src/modules/assets/routes.js';
import { PageMeta } from '../../src/modules/assets/schemas.js';
import { RISKS_PATH as SERVER_RISKS } from '../../src/modules/risks/routes.js';
import { CursorMeta } from '../../src/modules/risks/schemas.js';
import { VULNERABILITIES_PATH as SERVER_VULNERABILITIES } from '../../src/modules/vulnerabilities/routes.js';
import { FindingBatchMeta } from '../../src/modules/vulnerabilities/schemas.js';
import { closedPort, sharedServer } from './server.js';

const server = sharedServer();
const client = (key = server.keys[0], url = server.url) =>
  createClient({ baseUrl: url, apiKey: key, timeoutMs: 20_000 });

async function collect<T>(iterator: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of iterator) items.push(item);
  return items;
}

const errorOf = async (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => expect.fail('the call succeeded'),
    (error: unknown) => error,
  );

describe('operations', () => {
  it('asks the paths the server routes', () => {
    expect([ASSETS_PATH, RISKS_PATH, VULNERABILITIES_PATH]).toEqual([
      SERVER_ASSETS,
      SERVER_RISKS,
      SERVER_VULNERABILITIES,
    ]);
    expect(ASSET_PATH.startsWith(`${SERVER_ASSETS}/`)).toBe(true);
  });

  it('takes every parameter of the QuerySpecs the server parses with (compile-time)', () => {
    type Params<S> = Exclude<keyof S, 'format'>;
    expectTypeOf<keyof AssetListParams>().toEqualTypeOf<Params<typeof listAssetsSpec.params>>();
    expectTypeOf<keyof RiskListParams>().toEqualTypeOf<Params<typeof listRisksSpec.params>>();
    expectTypeOf<keyof VulnerabilityListParams>().toEqualTypeOf<Params<typeof listVulnerabilitiesSpec.params>>();
    expect(Object.keys(listRisksSpec.params)).toContain('fields');
  });

  it('assets.list: a numbered page of typed assets', async () => {
    const page = await client().assets.list({
      perPage: 3,
      sortBy: 'riskScore',
      sortOrder: 'DESC',
      providers: ['AWS', 'GCP'],
    });
    expect(page.data).toHaveLength(3);
    expect(Value.Check(PageMeta, page.meta)).toBe(true);
    for (const asset of page.data) {
      expect(Value.Errors(Asset, asset)).toEqual([]);
      expect(['AWS', 'GCP']).toContain(asset.provider);
    }
    const scores = page.data.map((a) => a.riskScore ?? -1);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
  });

  it('assets.sbom: a signed link that downloads the CycloneDX document without a key; a missing asset is a 404', async () => {
    const [vulnerable] = (await client().assets.list({ isVulnerable: true, perPage: 1 })).data;
    const link = await client().assets.sbom(vulnerable!.id);
    expect(link.meta.expiresInSeconds).toBe(3600);
    const res = await fetch(link.data.url);
    expect(res.status).toBe(200);
    const body = await res.text();
    expect(body.length).toBe(link.meta.fileSizeInBytes);
    expect(JSON.parse(body)).toMatchObject({ bomFormat: 'CycloneDX', specVersion: '1.6' });
    const missing = await errorOf(client().assets.sbom('sirn:assets:missing'));
    expect(missing).toBeInstanceOf(SecinvApiError);
    expect((missing as SecinvApiError).status).toBe(404);
  });

  it('assets.get: one asset by an id with ":" and "/", with its raw data; a missing one is a typed 404', async () => {
    const [first] = (await client().assets.list({ perPage: 1 })).data;
    const asset = await client().assets.get(first!.id, { include: 'rawData' });
    expect(asset.id).toBe(first!.id);
    expect(typeof asset.rawData).toBe('object');
    const error = await errorOf(client().assets.get(`${first!.id}/not-there`));
    expect(error).toBeInstanceOf(SecinvApiError);
    expect(error).toMatchObject({ status: 404, code: 'not_found' });
    expect((error as SecinvApiError).requestId).toMatch(/\S/);
  });

  it("another tenant's asset is a 404, as a missing one", async () => {
    const mine = await collect(client(server.keys[0]).assets.all({ perPage: 1000 }));
    const theirs = new Set((await collect(client(server.keys[1]).assets.all())).map((a) => a.id));
    const onlyMine = mine.find((a) => !theirs.has(a.id));
    expect(onlyMine).toBeDefined();
    await expect(client(server.keys[1]).assets.get(onlyMine!.id)).rejects.toMatchObject({ status: 404 });
  });

  it('risks.list: a cursor batch; fields narrow the type and the records', async () => {
    const page = await client().risks.list({ perPage: 5, fields: ['id', 'score'], sortBy: 'score' });
    expectTypeOf(page.data[0]!).toEqualTypeOf<RiskItem<'id' | 'score'>>();
    expectTypeOf(page.data[0]!).not.toHaveProperty('description');
    expect(Value.Check(CursorMeta, page.meta)).toBe(true);
    expect(page.data.map((r) => Object.keys(r).sort())).toEqual(Array(5).fill(['id', 'score']));
  });

  it('vulnerabilities.list: a page without the count', async () => {
    const page = await client().vulnerabilities.list({ perPage: 10, includeTotal: false, severityLevels: 'CRITICAL' });
    expect(Value.Check(FindingBatchMeta, page.meta)).toBe(true);
    for (const finding of page.data) {
      expect(Value.Errors(Vulnerability, finding)).toEqual([]);
      expect(finding.severityLevel).toBe('CRITICAL');
    }
  });
});

describe('every record', () => {
  it('risks.all yields every risk exactly once, across cursor batches', async () => {
    const { meta } = await client().risks.list({ perPage: 1 });
    for (const perPage of [7, undefined]) {
      const risks = await collect(client().risks.all({ perPage, include: ['primaryAsset'] }));
      expect(risks).toHaveLength(meta.total);
      expect(new Set(risks.map((r) => r.id)).size).toBe(meta.total);
      for (const risk of risks.slice(0, 20))
        expect(Value.Errors(RiskSchema, { ...risk, primaryAsset: undefined })).toEqual([]);
      expect(risks.some((r) => r.primaryAsset !== undefined)).toBe(true);
    }
    expect(meta.total).toBeGreaterThan(100);
  });

  it('assets.all and vulnerabilities.all walk past their largest page', async () => {
    const { meta } = await client().assets.list({ perPage: 1 });
    const assets = await collect(client().assets.all());
    expect(meta.total).toBeGreaterThan(1000);
    expect(new Set(assets.map((a) => a.id)).size).toBe(meta.total);

    const total = (await client().vulnerabilities.list({ perPage: 1 })).meta as { total: number };
    const findings = await collect(client().vulnerabilities.all());
    expect(total.total).toBeGreaterThan(2000);
    expect(new Set(findings.map((f) => `${f.assetId} ${f.vulnerabilityId}`)).size).toBe(total.total);
  });

  it('the exports yield the same records as the walks, in the same order', async () => {
    const filters = { severityLevels: ['CRITICAL', 'HIGH'] } as const;
    const walked = await collect(client().risks.all({ ...filters, perPage: 50 }));
    const exported = await collect(client().risks.export(filters));
    expect(exported).toEqual(walked);
    expect((await collect(client().assets.export())).map((a) => a.id)).toEqual(
      (await collect(client().assets.all())).map((a) => a.id),
    );
    const findings = await collect(client().vulnerabilities.export({ hasKev: true }));
    expect(findings.every((f) => f.hasKev)).toBe(true);
  });

  it('stopping early ends the download', async () => {
    let n = 0;
    for await (const _ of client().vulnerabilities.export()) if (++n === 3) break;
    expect(n).toBe(3);
    // The server is still fine for the next call.
    expect((await client().risks.list({ perPage: 1 })).data).toHaveLength(1);
  });
});

describe('errors', () => {
  it('a 400 carries every problem the server listed', async () => {
    const error = await errorOf(
      client().assets.list({ perPage: 5000, riskScoreGte: 11, firstObservedAtStart: 'yesterday' }),
    );
    expect(error).toBeInstanceOf(SecinvApiError);
    const apiError = error as SecinvApiError;
    expect(apiError.status).toBe(400);
    expect(apiError.code).toBe('invalid_parameter');
    expect(apiError.fields.sort()).toEqual(['firstObservedAtStart', 'perPage', 'riskScoreGte']);
    expect(apiError.problems).toHaveLength(3);
  });

  it('a refused key is a 401, tried once', async () => {
    const error = await errorOf(client('secinv_not-a-key').risks.list());
    expect(error).toMatchObject({ status: 401, code: 'unauthorized' });
    expect((error as Error).message).not.toContain('secinv_not-a-key');
  });

  it('a 429 names its wait; a wait longer than the client allows is not waited for', async () => {
    const limited = await server.listen({ rateLimitPerMinute: 1 });
    const api = createClient({ baseUrl: limited, apiKey: server.keys[0], retries: 3, maxRetryDelayMs: 1000 });
    await api.risks.list({ perPage: 1 });
    const error = await errorOf(api.risks.list({ perPage: 1 }));
    expect(error).toMatchObject({ status: 429, code: 'rate_limited' });
    expect((error as SecinvApiError).retryAfter).toBeGreaterThan(1);
  });

  it('a server that is not there is a connection error naming the URL', async () => {
    const url = await closedPort();
    const error = await errorOf(createClient({ baseUrl: url, apiKey: 'k' }).assets.list());
    expect(error).toBeInstanceOf(SecinvConnectionError);
    expect((error as SecinvConnectionError).message).toContain(url);
    expect((error as SecinvConnectionError).message).toContain('ECONNREFUSED');
    expect((error as SecinvConnectionError).timedOut).toBe(false);
  });
});
