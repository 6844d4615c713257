// Property-based request fuzzing over every route and every parameter, on a real database of each dialect: queries
// built from each operation's own parameter table (valid values, values of the wrong kind, out of range, empty,
// repeated, U+0000, odd Unicode and percent-encoding, unknown names) and arbitrary path ids. Whatever the request:
// never a 5xx, every non-2xx in the error shape with a request id, and a request known to be invalid never a 200.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listAssetsSpec, getAssetSpec } from '../../src/domain/assets.js';
import { errorStatus } from '../../src/domain/errors.js';
import type { ParamSpec } from '../../src/domain/query.js';
import { listRisksSpec } from '../../src/domain/risks.js';
import { listVulnerabilitiesSpec } from '../../src/domain/vulnerabilities.js';
import { A1, A2, fixture } from '../fixtures.js';
import { setupWithKeys, TENANT_A, type TestContext } from '../helpers.js';

let ctx: TestContext;
let key: string;
beforeAll(async () => {
  ({
    ctx,
    keys: [key],
  } = await setupWithKeys(fixture, [TENANT_A]));
});
afterAll(async () => ctx.close());

/**
 * Requests per operation and dialect: five operations, 3,500 requests per database on each run of the suite, each run
 * with a new seed. SECINV_FUZZ_RUNS asks for a deeper run (2100: 10,500 requests per database).
 */
const RUNS = Number(process.env.SECINV_FUZZ_RUNS ?? 700);
const CODES = new Set(Object.keys(errorStatus));

/** Text that breaks things: separators, encodings, control characters, U+0000, astral and combining characters. */
const nasty = fc.oneof(
  fc.constantFrom(
    '',
    ' ',
    ',',
    ',,',
    '%',
    '%zz',
    '%00',
    '\u0000',
    'a\u0000b',
    '\u202e',
    'é',
    '😀',
    'e\u0301',
    '\\',
    '"',
  ),
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.string({ maxLength: 40 }),
);

/** A value of the parameter's own kind, often valid, sometimes just outside what it accepts. */
function valueOf(spec: ParamSpec): fc.Arbitrary<string> {
  switch (spec.kind) {
    case 'enum':
      return fc.oneof(
        fc.constantFrom(...spec.values),
        fc.constantFrom(...spec.values).map((v) => v.toUpperCase()),
      );
    case 'boolean':
      return fc.constantFrom('true', 'false', 'TRUE', 'yes', '1');
    case 'integer':
    case 'decimal':
      return fc.oneof(
        fc.integer({ min: spec.min, max: Math.min(spec.max, 1_000_000) }).map(String),
        fc.constantFrom(String(spec.min - 1), String(spec.max + 1), '1.5', '-1', '1e3', '9'.repeat(30)),
      );
    case 'datetime':
      return fc.oneof(
        fc
          .date({ min: new Date('1970-01-01'), max: new Date('2100-01-01'), noInvalidDate: true })
          .map((d) => d.toISOString()),
        fc.constantFrom('2024-01-01', '2024-02-30', '2024-01-01T25:00:00Z', 'yesterday'),
      );
    case 'list': {
      const item =
        spec.item.type === 'enum'
          ? fc.constantFrom(...spec.item.values)
          : spec.item.type === 'environment'
            ? fc.oneof(fc.uuid().map(String), fc.constantFrom('production', 'non-production'))
            : fc.constantFrom(A1, A2, 'CVE-2024-0001', 'risk-01', 'us-east-1');
      return fc.array(item, { minLength: 1, maxLength: 4 }).map((items) => items.join(','));
    }
    case 'string':
      return fc.constantFrom('lodash', 'openssl', 'prod', 'running', 'x');
  }
}

interface Built {
  query: string;
  /** The request breaks a rule for certain (an unknown name, U+0000, an empty value): it must not be a 200. */
  invalid: boolean;
}

/** A query string over an operation's parameters: each picked parameter valid, or nasty, or repeated. */
function queryOf(params: Record<string, ParamSpec>): fc.Arbitrary<Built> {
  const names = Object.keys(params);
  const entry = fc
    .constantFrom(...names)
    .chain((name) =>
      fc.oneof(
        { weight: 4, arbitrary: valueOf(params[name]!).map((v) => ({ name, value: v, invalid: false })) },
        { weight: 1, arbitrary: nasty.map((v) => ({ name, value: v, invalid: v === '' || v.includes('\u0000') })) },
      ),
    );
  const unknown = fc
    .oneof(fc.constantFrom('__proto__', 'constructor', 'toString', 'Page', 'per_page', 'sort'), nasty)
    .filter((name) => name !== '' && !names.includes(name))
    .map((name) => ({ name, value: '1', invalid: true }));
  return fc
    .array(fc.oneof({ weight: 6, arbitrary: entry }, { weight: 1, arbitrary: unknown }), { maxLength: 6 })
    .map((entries) => ({
      query: entries.map((e) => `${encodeURIComponent(e.name)}=${encodeURIComponent(e.value)}`).join('&'),
      invalid: entries.some((e) => e.invalid),
    }));
}

async function check(url: string, invalid: boolean): Promise<void> {
  const res = await ctx.app.inject({ url, headers: { authorization: `Bearer ${key}` } });
  expect(res.statusCode, `${url}: ${res.body.slice(0, 300)}`).toBeLessThan(500);
  if (invalid) expect(res.statusCode, url).not.toBe(200);
  if (res.statusCode >= 400) {
    expect(res.headers['x-request-id'], url).toBeTruthy();
    const body = res.json<{ errors: { code: string; field?: string; message: string }[] }>();
    expect(body.errors.length, url).toBeGreaterThan(0);
    for (const e of body.errors) {
      expect(CODES.has(e.code), `${url}: ${e.code}`).toBe(true);
      expect(typeof e.message, url).toBe('string');
    }
  }
}

const operations = [
  ['/v1/tenant/assets', listAssetsSpec.params],
  ['/v1/tenant/vulnerabilities', listVulnerabilitiesSpec.params],
  ['/v1/tenant/risks', listRisksSpec.params],
] as const;

describe('fuzzed requests', () => {
  for (const [path, params] of operations) {
    it(`${path}: no 5xx, errors in their shape, invalid input never 200`, async () => {
      await fc.assert(
        fc.asyncProperty(queryOf(params as Record<string, ParamSpec>), async ({ query, invalid }) =>
          check(`${path}?${query}`, invalid),
        ),
        { numRuns: RUNS },
      );
    }, 240_000);
  }

  it('an asset or its SBOM link by any id, with any get parameters', async () => {
    const id = fc.oneof(
      fc.constantFrom(A1, A2, encodeURIComponent(A1), encodeURIComponent(A2)),
      nasty.map(encodeURIComponent),
      fc.string({ maxLength: 60 }).map(encodeURIComponent),
      fc.constantFrom('%', '%zz', 'a/b', '..', '%2e%2e', '%00', 'a%2Fsbom', 'x'.repeat(1100)),
    );
    await fc.assert(
      fc.asyncProperty(
        id,
        fc.boolean(),
        queryOf(getAssetSpec.params as Record<string, ParamSpec>),
        async (assetId, sbom, { query, invalid }) =>
          check(`/v1/tenant/assets/${assetId}${sbom ? '/sbom' : ''}?${query}`, invalid),
      ),
      { numRuns: RUNS * 2 },
    );
  }, 240_000);
});
