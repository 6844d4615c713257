// Indexed texts have limits in UTF-8 bytes (src/domain/limits.ts) that hold on both databases: PostgreSQL refuses a
// b-tree entry over 2,704 bytes, SQLite has no limit, so without them a file imported on one and failed on the other.
// The texts are random, as compression would let a repetitive one through PostgreSQL's limit.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LONG_KEY_BYTES, SHORT_KEY_BYTES, utf8Bytes } from '../../src/domain/limits.js';
import { createKey, importRecords, setup, TENANT_A, type TestContext } from '../helpers.js';
import {
  assetRecord,
  exemptionRecord,
  findingRecord,
  riskRecord,
  tenantRecord,
  type ImportRecord,
} from '../records.js';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await setup();
});
afterAll(async () => ctx.close());

// A fixed sequence (mulberry32), so a failure repeats; characters of 1 to 4 bytes, none that an id may not hold.
let seed = 16;
const random = (n: number): number => {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) % n;
};
const ASCII = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._:@+=-';
const WIDE = ['é', 'ß', 'İ', '€', '中', '😀'];
/** Random text of exactly `bytes` bytes of UTF-8; `ascii` keeps to one-byte characters. */
function randomText(bytes: number, ascii = false): string {
  let out = '';
  let left = bytes;
  while (left > 0) {
    const wide = WIDE[random(WIDE.length)]!;
    const char = !ascii && random(3) === 0 && utf8Bytes(wide) <= left ? wide : ASCII[random(ASCII.length)]!;
    out += char;
    left -= utf8Bytes(char);
  }
  return out;
}

const idMessage = (max: number, bytes: number) => `must be 1 to ${max} bytes long in UTF-8, not ${bytes}`;
const textMessage = (max: number, bytes: number) => `must be at most ${max} bytes long in UTF-8, not ${bytes}`;

describe('length limits of indexed texts', () => {
  it('a 3,000-character asset name is refused with its line and field, and nothing is written', async () => {
    const name = randomText(3000, true);
    const result = await importRecords(ctx.storage, [tenantRecord(), assetRecord('sirn:long-name', { name })]);
    expect(result.problems).toEqual([
      { location: 'test.ndjson:2', path: 'record.name', message: textMessage(LONG_KEY_BYTES, 3000) },
    ]);
    expect(result.written).toBe(false);
    expect(await ctx.storage.listTenants()).toEqual([]);
  });

  it('an id or indexed text of each kind one byte over its limit is refused with its line and field', async () => {
    const over = (max: number) => randomText(max + 1);
    const a = 'sirn:a';
    const lines: [ImportRecord, string, string][] = [
      [
        ['assetGroup', { tenantId: TENANT_A, assetGroupId: randomUUID(), assetIds: [a, over(LONG_KEY_BYTES)] }],
        'record.assetIds[1]',
        textMessage(LONG_KEY_BYTES, LONG_KEY_BYTES + 1),
      ],
      [assetRecord(over(LONG_KEY_BYTES)), 'record.id', idMessage(LONG_KEY_BYTES, LONG_KEY_BYTES + 1)],
      ...(['name', 'region', 'service', 'resourceType'] as const).map((field): [ImportRecord, string, string] => [
        // One-byte characters: a lower-cased `service` could be longer than the text given.
        assetRecord(a, { [field]: randomText(LONG_KEY_BYTES + 1, true) }),
        `record.${field}`,
        textMessage(LONG_KEY_BYTES, LONG_KEY_BYTES + 1),
      ]),
      [
        assetRecord(a, { service: 'AWS::' + 'İ'.repeat(509) }),
        'record.service',
        textMessage(LONG_KEY_BYTES, 5 + 509 * 3),
      ],
      [findingRecord(over(LONG_KEY_BYTES), 'CVE-1'), 'record.assetId', idMessage(LONG_KEY_BYTES, LONG_KEY_BYTES + 1)],
      [
        findingRecord(a, over(SHORT_KEY_BYTES)),
        'record.vulnerabilityId',
        idMessage(SHORT_KEY_BYTES, SHORT_KEY_BYTES + 1),
      ],
      ...(['packageName', 'targetName'] as const).map((field): [ImportRecord, string, string] => [
        findingRecord(a, 'CVE-1', 'HIGH', { packages: [{}, { [field]: over(LONG_KEY_BYTES) }] }),
        `record.packages[1].${field}`,
        textMessage(LONG_KEY_BYTES, LONG_KEY_BYTES + 1),
      ]),
      [riskRecord(over(LONG_KEY_BYTES)), 'record.id', idMessage(LONG_KEY_BYTES, LONG_KEY_BYTES + 1)],
      ...(['primaryAssetId', 'riskTypeId'] as const).map((field): [ImportRecord, string, string] => [
        riskRecord('r', { [field]: over(LONG_KEY_BYTES) }),
        `record.${field}`,
        textMessage(LONG_KEY_BYTES, LONG_KEY_BYTES + 1),
      ]),
    ];
    const result = await importRecords(ctx.storage, [tenantRecord(), assetRecord(a), ...lines.map((l) => l[0])]);
    expect(result.written).toBe(false);
    // Each line's problem, and no other problem with the field of a length limit.
    const problems = result.problems.filter((p) => p.message.includes('bytes long'));
    expect(problems).toEqual(
      lines.map(([, path, message], i) => ({ location: `test.ndjson:${i + 3}`, path, message })),
    );
    expect(await ctx.storage.listTenants()).toEqual([]);
  });

  it('texts at exactly their limits, in the widest keys, import and read back unchanged', async () => {
    // Tenant, exemption and asset group ids are UUIDs (36 bytes): the widest keys are the other ids'.
    const tenantId = randomUUID();
    const assetId = randomText(LONG_KEY_BYTES);
    const vulnerabilityId = randomText(SHORT_KEY_BYTES);
    const exemptionId = randomUUID();
    const groupId = randomUUID();
    const name = randomText(LONG_KEY_BYTES);
    const packageName = randomText(LONG_KEY_BYTES);
    const riskId = randomText(LONG_KEY_BYTES);
    const result = await importRecords(ctx.storage, [
      tenantRecord(tenantId),
      assetRecord(assetId, {
        tenantId,
        name,
        region: randomText(LONG_KEY_BYTES),
        resourceType: randomText(LONG_KEY_BYTES),
      }),
      ['assetGroup', { tenantId, assetGroupId: groupId, assetIds: [assetId] }],
      findingRecord(assetId, vulnerabilityId, 'HIGH', {
        tenantId,
        packages: [{ packageName, targetName: randomText(LONG_KEY_BYTES) }],
      }),
      exemptionRecord(exemptionId, [{ vulnerabilityId, assetIds: [assetId] }], { tenantId }),
      riskRecord(riskId, { tenantId, primaryAssetId: assetId, riskTypeId: randomText(LONG_KEY_BYTES) }),
    ]);
    expect(result.problems).toEqual([]);
    expect(result.written).toBe(true);

    const key = await createKey(ctx.storage, tenantId);
    const get = async (url: string) => {
      const res = await ctx.app.inject({ url, headers: { authorization: `Bearer ${key}` } });
      expect(res.statusCode, res.body).toBe(200);
      return res.json().data;
    };
    expect(await get(`/v1/tenant/assets/${encodeURIComponent(assetId)}`)).toMatchObject({ id: assetId, name });
    const [listed] = await get(`/v1/tenant/vulnerabilities?isExempted=true`);
    expect(listed).toMatchObject({ assetId, vulnerabilityId, packages: [{ packageName }] });
    expect(listed.exemptions.map((e: { exemptionId: string }) => e.exemptionId)).toEqual([exemptionId]);
    expect((await get(`/v1/tenant/risks`)).map((r: { id: string }) => r.id)).toContain(riskId);
    const byName = await get(`/v1/tenant/assets?assetGroupIds=${encodeURIComponent(groupId)}`);
    expect(byName.map((r: { id: string }) => r.id)).toEqual([assetId]);
  });

  it('a filter longer than any stored text is no match, on either database', async () => {
    await importRecords(ctx.storage, [tenantRecord(), assetRecord('sirn:plain', { name: 'plain' })]);
    const key = await createKey(ctx.storage, TENANT_A);
    for (const query of [
      `query=${randomText(3000, true)}`,
      `regions=${randomText(3000, true)}`,
      `ids=${randomText(3000, true)}`,
    ]) {
      const res = await ctx.app.inject({
        url: `/v1/tenant/assets?${query}`,
        headers: { authorization: `Bearer ${key}` },
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data).toEqual([]);
    }
  });
});
