import { afterAll, beforeAll, expect, it } from 'vitest';
import { createKey, importRecords, setup, TENANT_A, type TestContext } from '../helpers.js';
import { assetRecord, tenantRecord } from '../records.js';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await setup();
});
afterAll(async () => ctx.close());

it('an id of 1024 characters with slashes works raw and percent-encoded', async () => {
  const id = `sirn:assets:${'x/'.repeat(505)}end1`.slice(0, 1024);
  expect(id).toHaveLength(1024);
  const result = await importRecords(ctx.storage, [tenantRecord(), assetRecord(id, { lastObservedAt: '2024-01-01' })]);
  expect(result.problems).toEqual([]);
  const key = await createKey(ctx.storage, TENANT_A);
  for (const path of [id, encodeURIComponent(id)]) {
    const res = await ctx.app.inject({ url: `/v1/tenant/assets/${path}`, headers: { authorization: `Bearer ${key}` } });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.id).toBe(id);
  }
});
