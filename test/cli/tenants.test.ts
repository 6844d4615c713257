// `secinv tenants create|list` on a real database of each dialect.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fixture } from '../fixtures.js';
import { createTestDatabase, importRecords, ORG_A, TENANT_A, TENANT_B } from '../helpers.js';
import { openStorage } from '../../src/storage/index.js';
import { runCli } from './run.js';

let db: string;
let drop: () => Promise<void>;
// A migrated copy: no test here is about a database that does not exist yet (newcomer.test.ts is).
beforeEach(async () => {
  ({ url: db, drop } = await createTestDatabase(undefined, { migrated: true }));
});
afterEach(async () => drop());

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('secinv tenants', () => {
  it('create prints the new id alone on stdout; the tenant can get a key and be listed', async () => {
    const created = await runCli('tenants', 'create', '--name', 'Payments', '--db', db);
    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(/^[0-9a-f-]{36}\n$/);
    const id = created.stdout.trim();
    expect(id).toMatch(UUID);
    expect(created.stderr).toContain(`created tenant ${id} (Payments) in organization `);

    expect((await runCli('keys', 'create', '--tenant', id, '--db', db)).code).toBe(0);
    const listed = await runCli('tenants', 'list', '--json', '--db', db);
    expect(listed.code).toBe(0);
    const tenants = JSON.parse(listed.stdout) as {
      tenantId: string;
      organizationId: string;
      name: string;
      keys: number;
    }[];
    expect(tenants).toHaveLength(1);
    expect(tenants[0]).toMatchObject({ tenantId: id, name: 'Payments', assets: 0, findings: 0, risks: 0, keys: 1 });
    expect(tenants[0]?.organizationId).toMatch(UUID);
  });

  it('create takes the ids given, and refuses an id that exists without changing it', async () => {
    const id = '33333333-3333-4333-8333-333333333333';
    const created = await runCli(
      'tenants',
      'create',
      '--name',
      'Given',
      '--id',
      id.toUpperCase(),
      '--organization-id',
      ORG_A,
      '--db',
      db,
    );
    expect(created).toMatchObject({ code: 0, stdout: `${id}\n` });
    const again = await runCli('tenants', 'create', '--name', 'Other', '--id', id, '--db', db);
    expect(again.code).toBe(1);
    expect(again.stdout).toBe('');
    expect(again.stderr).toContain(`secinv: a tenant with id '${id}' already exists\n`);
    const storage = await openStorage(db);
    try {
      expect(await storage.listTenants()).toEqual([{ tenantId: id, organizationId: ORG_A, name: 'Given' }]);
    } finally {
      await storage.close();
    }
  });

  it('refuses ids that are not UUIDs, an empty name, and a missing --name', async () => {
    expect(await runCli('tenants', 'create', '--name', 'x', '--id', 'not-a-uuid', '--db', db)).toMatchObject({
      code: 1,
      stderr: "secinv: --id must be a UUID, not 'not-a-uuid'\n",
    });
    expect((await runCli('tenants', 'create', '--name', 'x', '--organization-id', '42', '--db', db)).stderr).toContain(
      '--organization-id must be a UUID',
    );
    expect((await runCli('tenants', 'create', '--name', '  ', '--db', db)).stderr).toContain(
      '--name must not be empty',
    );
    expect((await runCli('tenants', 'create', '--db', db)).code).toBe(2);
    expect(JSON.parse((await runCli('tenants', 'list', '--json', '--db', db)).stdout)).toEqual([]);
  });

  it("list counts each tenant's assets, findings, risks and keys, as JSON or as a table", async () => {
    const storage = await openStorage(db);
    try {
      expect((await importRecords(storage, fixture)).problems).toEqual([]);
    } finally {
      await storage.close();
    }
    const json = JSON.parse((await runCli('tenants', 'list', '--json', '--db', db)).stdout) as Record<
      string,
      unknown
    >[];
    const risks = fixture.filter(([kind, r]) => kind === 'risk' && r.tenantId === TENANT_A).length;
    expect(json.map((t) => [t.tenantId, t.assets, t.findings, t.risks, t.keys])).toEqual([
      [TENANT_A, 6, 8, risks, 0],
      [TENANT_B, 2, 1, fixture.filter(([kind, r]) => kind === 'risk' && r.tenantId === TENANT_B).length, 0],
    ]);
    const table = (await runCli('tenants', 'list', '--db', db)).stdout.split('\n');
    expect(table[0]).toMatch(/^ID\s+ORGANIZATION\s+NAME\s+ASSETS\s+FINDINGS\s+RISKS\s+KEYS$/);
    expect(table[1]).toMatch(new RegExp(`^${TENANT_A}\\s+${ORG_A}\\s+Tenant A\\s+6\\s+8\\s+${risks}\\s+0$`));
  });

  it('set-sla sets the days given over the current SLA, prints it, and refuses days that are not whole and >= 0', async () => {
    expect(
      (
        await importRecords(await openStorage(db), [
          ['tenant', { tenantId: TENANT_A, organizationId: ORG_A, name: 'A' }],
        ])
      ).problems,
    ).toEqual([]);
    const set = await runCli(
      'tenants',
      'set-sla',
      '--tenant',
      TENANT_A,
      '--critical',
      '7',
      '--low',
      'none',
      '--db',
      db,
    );
    expect(set.code, set.stderr).toBe(0);
    expect(JSON.parse(set.stdout)).toEqual({ CRITICAL: 7, HIGH: 30, MEDIUM: 90 });
    expect(set.stderr).toContain(`set the SLA of tenant ${TENANT_A}: 0 due dates moved`);
    const more = await runCli('tenants', 'set-sla', '--tenant', TENANT_A, '--unknown', '365', '--db', db);
    expect(JSON.parse(more.stdout)).toEqual({ CRITICAL: 7, HIGH: 30, MEDIUM: 90, UNKNOWN: 365 });
    const reset = await runCli('tenants', 'set-sla', '--tenant', TENANT_A, '--defaults', '--db', db);
    expect(JSON.parse(reset.stdout)).toEqual({ CRITICAL: 15, HIGH: 30, MEDIUM: 90, LOW: 180 });
    for (const [flag, value] of [
      ['--critical', '-1'],
      ['--high', '1.5'],
      ['--medium', 'soon'],
      ['--low', '100000'],
    ] as const) {
      const bad = await runCli('tenants', 'set-sla', '--tenant', TENANT_A, flag, value, '--db', db);
      expect(bad.code).toBe(1);
      expect(bad.stderr).toContain(
        `secinv: ${flag} must be a whole number of days from 0 to 3650 (or none), not '${value}'`,
      );
    }
    const storage = await openStorage(db);
    expect(await storage.tenantSla(TENANT_A)).toEqual({ CRITICAL: 15, HIGH: 30, MEDIUM: 90, LOW: 180 });
    await storage.close();
    const unknown = await runCli('tenants', 'set-sla', '--tenant', TENANT_B, '--critical', '3', '--db', db);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain(`secinv: unknown tenant '${TENANT_B}'`);
  });
});
