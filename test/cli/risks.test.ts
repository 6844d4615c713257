// `secinv risks derive|dismiss|reopen` on a real database of each dialect: exit codes, messages, and what the API
// then serves (docs/RISKS.md).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { derivedRiskId } from '../../src/domain/risk-engine.js';
import { fixture, A1, A4 } from '../fixtures.js';
import {
  createKey,
  importRecords,
  rawTenantAccess,
  setupWithKeys,
  TENANT_A,
  TENANT_B,
  type TestContext,
} from '../helpers.js';
import { runCli } from './run.js';

let ctx: TestContext;
let key: string;
beforeEach(async () => {
  ({
    ctx,
    keys: [key],
  } = await setupWithKeys(fixture, [TENANT_A]));
});
afterEach(async () => ctx.close());

interface RiskBody {
  data: {
    id: string;
    riskTypeId: string;
    lifecycleState: string;
    primaryAssetId: string;
    score: number;
    likelihood: number;
    impact: number;
    factors: { key: string; value: number; meta: { side: string } }[];
    primaryAsset: { id: string; name: string } | null;
  }[];
  meta: { total: number };
}

const list = async (query: string) => {
  const res = await ctx.app.inject({
    method: 'GET',
    url: `/v1/tenant/risks?${query}`,
    headers: { authorization: `Bearer ${key}` },
  });
  expect(res.statusCode).toBe(200);
  return res.json<RiskBody>();
};

describe('secinv risks', () => {
  it('derive runs the rules for the tenant; the API serves the risks with their asset and factors', async () => {
    const run = await runCli('risks', 'derive', '--tenant', TENANT_A, '--db', ctx.url);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^secinv: database .*\nderived: 6 assets, \d+ risks \(\d+ new, 0 changed, 0 gone\)\n$/);

    const kev = await list('riskTypeIds=secinv.exposed-kev-vulnerability&include=primaryAsset');
    expect(kev.meta.total).toBe(1);
    const [risk] = kev.data;
    expect(risk?.id).toBe(derivedRiskId(TENANT_A, 'secinv.exposed-kev-vulnerability', A1));
    expect(risk?.primaryAsset).toMatchObject({ id: A1, name: 'web-prod-1' });
    // Every score is explained by its factors: the values of a side add up to it (capped at 10).
    const side = (s: string) =>
      Math.min(10, risk!.factors.filter((f) => f.meta.side === s).reduce((n, f) => n + f.value * 10, 0) / 10);
    expect(side('likelihood')).toBeCloseTo(risk!.likelihood, 10);
    expect(side('impact')).toBeCloseTo(risk!.impact, 10);
    expect(risk!.score).toBe(Math.round(risk!.likelihood * risk!.impact) / 10);

    const secrets = await list('riskTypeIds=secinv.exposed-secret&fields=primaryAssetId');
    expect(secrets.data.map((r) => r.primaryAssetId).sort()).toContain(A4);
    // Tenant B's data was not derived.
    const other = await createKey(ctx.storage, TENANT_B);
    const b = await ctx.app.inject({
      method: 'GET',
      url: '/v1/tenant/risks?riskTypeIds=secinv.exposed-kev-vulnerability',
      headers: { authorization: `Bearer ${other}` },
    });
    expect(b.json<RiskBody>().meta.total).toBe(0);
  });

  it('dismiss and reopen set the lifecycle state; the API filters by it', async () => {
    await runCli('risks', 'derive', '--tenant', TENANT_A, '--db', ctx.url);
    const id = derivedRiskId(TENANT_A, 'secinv.exposed-kev-vulnerability', A1);
    const dismissed = await runCli('risks', 'dismiss', id, '--tenant', TENANT_A, '--as', 'not-a-risk', '--db', ctx.url);
    expect(dismissed.code).toBe(0);
    expect(dismissed.stderr).toContain(`risk ${id} is now DISMISSED_NOT_A_RISK\n`);
    expect((await list('lifecycleStates=DISMISSED_NOT_A_RISK')).data.map((r) => r.id)).toEqual([id]);

    // A re-derivation keeps the dismissal.
    await runCli('risks', 'derive', '--tenant', TENANT_A, '--db', ctx.url);
    expect((await list(`ids=${id}`)).data[0]?.lifecycleState).toBe('DISMISSED_NOT_A_RISK');

    expect((await runCli('risks', 'reopen', id, '--tenant', TENANT_A, '--db', ctx.url)).code).toBe(0);
    expect((await list(`ids=${id}`)).data[0]?.lifecycleState).toBe('OPEN');
  });

  it('an unknown or foreign risk id exits 1 and changes nothing; a bad --as exits 2', async () => {
    await runCli('risks', 'derive', '--tenant', TENANT_A, '--db', ctx.url);
    await importRecords(ctx.storage, [
      [
        'risk',
        {
          tenantId: TENANT_B,
          id: 'b-only',
          severityLevel: 'LOW',
          score: 1,
          discoveredAt: '2024-01-01',
          lifecycleState: 'OPEN',
        },
      ],
    ]);
    const before = await list('perPage=100');
    const other = await createKey(ctx.storage, TENANT_B);
    const mine = new Set(before.data.map((r) => r.id));
    const theirs = (
      await ctx.app.inject({ method: 'GET', url: '/v1/tenant/risks', headers: { authorization: `Bearer ${other}` } })
    )
      .json<RiskBody>()
      .data.map((r) => r.id)
      .find((id) => !mine.has(id));
    expect(theirs).toBeDefined();
    const foreign = await runCli(
      'risks',
      'dismiss',
      theirs!,
      '--tenant',
      TENANT_A,
      '--as',
      'accepted',
      '--db',
      ctx.url,
    );
    expect(foreign.code).toBe(1);
    expect(foreign.stderr).toContain(`tenant ${TENANT_A} has no risk '${theirs}'`);
    const unknown = await runCli('risks', 'reopen', 'nope', '--tenant', TENANT_A, '--db', ctx.url);
    expect(unknown.code).toBe(1);
    const bad = await runCli('risks', 'dismiss', 'x', '--tenant', TENANT_A, '--as', 'ignored', '--db', ctx.url);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("option '--as <reason>' argument 'ignored' is invalid");
    expect(await list('perPage=100')).toEqual(before);
    const noTenant = await runCli(
      'risks',
      'derive',
      '--tenant',
      '33333333-3333-4333-8333-333333333333',
      '--db',
      ctx.url,
    );
    expect(noTenant.code).toBe(1);
    expect(noTenant.stderr).toContain("unknown tenant '33333333-3333-4333-8333-333333333333'");
  });

  it('dismiss --until: a day or a date-time in the future is kept; one in the past, now or not a date exits 1', async () => {
    await runCli('risks', 'derive', '--tenant', TENANT_A, '--db', ctx.url);
    const id = derivedRiskId(TENANT_A, 'secinv.exposed-kev-vulnerability', A1);
    const dismiss = (until: string) =>
      runCli('risks', 'dismiss', id, '--tenant', TENANT_A, '--as', 'accepted', '--until', until, '--db', ctx.url);
    const stored = async () => {
      const raw = await rawTenantAccess(ctx.url);
      try {
        return await raw.withTenant(TENANT_A, (db) =>
          db.selectFrom('risk_states').select('until').where('risk_id', '=', id).executeTakeFirst(),
        );
      } finally {
        await raw.close();
      }
    };

    const day = await dismiss('2999-01-31');
    expect(day.code).toBe(0);
    expect(day.stderr).toContain(`risk ${id} is now DISMISSED_ACCEPTED until 2999-01-31T00:00:00.000Z\n`);
    expect(await stored()).toEqual({ until: '2999-01-31T00:00:00.000Z' });
    const instant = await dismiss('2999-02-01T12:30:00+02:00');
    expect(instant.code).toBe(0);
    expect(await stored()).toEqual({ until: '2999-02-01T10:30:00.000Z' });

    const before = await list('perPage=100');
    for (const [until, message] of [
      ['2001-01-01', '--until 2001-01-01T00:00:00.000Z is not in the future'],
      [new Date(Date.now() - 1000).toISOString(), 'is not in the future'],
      ['next tuesday', "--until 'next tuesday' is not a date: give YYYY-MM-DD"],
      ['2999-02-30', "--until '2999-02-30' is not a date"],
    ] as const) {
      const refused = await dismiss(until);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(message);
    }
    // Nothing changed: the dismissal and its end are as they were.
    expect(await list('perPage=100')).toEqual(before);
    expect(await stored()).toEqual({ until: '2999-02-01T10:30:00.000Z' });

    // A dismissal without --until, and a reopen, clear it.
    expect((await runCli('risks', 'dismiss', id, '--tenant', TENANT_A, '--as', 'accepted', '--db', ctx.url)).code).toBe(
      0,
    );
    expect(await stored()).toEqual({ until: null });
    expect((await dismiss('2999-01-31')).code).toBe(0);
    expect((await runCli('risks', 'reopen', id, '--tenant', TENANT_A, '--db', ctx.url)).code).toBe(0);
    expect(await stored()).toEqual({ until: null });
  });
});
