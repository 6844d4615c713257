// A query compiled once (src/storage/db/compiled.ts) binds each run's own values where the first build put them, on both
// databases, and refuses a build that does not pass every value as a parameter.
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from '../../../src/storage/db/connect.js';
import { compiledOnce } from '../../../src/storage/db/compiled.js';
import type { Database } from '../../../src/storage/db/tables.js';
import { importRecords, openTestStorage, TENANT_A, TENANT_B, TEST_DIALECTS, type TestStorage } from '../../helpers.js';
import { fixture } from '../../fixtures.js';

describe.each(TEST_DIALECTS)('queries compiled once (%s)', (dialect) => {
  let db: TestStorage;
  let raw: Kysely<Database>;

  beforeAll(async () => {
    db = await openTestStorage(dialect);
    expect((await importRecords(db.storage, fixture)).problems).toEqual([]);
    raw = (await connect(db.url)).db;
  }, 60_000);
  afterAll(async () => {
    await raw.destroy();
    await db.dispose();
  });

  it('binds each run its own values, in any place and any number of times', async () => {
    const named = compiledOnce((k, tenantId: string, pattern: string) =>
      k
        .selectFrom('tenants')
        .select(['tenant_id', sql<number>`${pattern} = ${pattern}`.as('same')])
        .where('tenant_id', '=', tenantId)
        .where('name', 'like', pattern),
    );
    expect(await named(raw, TENANT_A, 'Tenant %')).toEqual([
      { tenant_id: TENANT_A, same: dialect === 'sqlite' ? 1 : true },
    ]);
    expect(await named(raw, TENANT_B, "Tenant B'; --")).toEqual([]);
    expect((await named(raw, TENANT_B, 'Tenant B'))[0]?.tenant_id).toBe(TENANT_B);
    expect(await named(raw, TENANT_A, 'Tenant B')).toEqual([]);
  });

  it('refuses a build that leaves a value out of its parameters', async () => {
    const blind = compiledOnce((k, _tenantId: string) => k.selectFrom('tenants').select('tenant_id'));
    await expect(blind(raw, TENANT_A)).rejects.toThrow(/not one of its parameters/);
  });
});
