// Issue's end to end, on each database: feeds, a Trivy image and Prowler reports ingested through the CLI derive risks
// that the API serves with their factors and primary assets; a dismissal survives a re-ingest; a new scan where the
// vulnerable package is fixed takes the risk away (docs/RISKS.md).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { derivedRiskId } from '../../src/domain/risk-engine.js';
import { createKey, setup, type TestContext } from '../helpers.js';
import { runCli } from './run.js';

const path = (name: string) => fileURLToPath(new URL(`../fixtures/ingest/${name}`, import.meta.url));
const TEAMDOJO = path('trivy/trivy-image-teamdojo-multi-target.json');
const PROWLER_AWS = path('assets/prowler-v3-ocsf-aws-one.json');
const PROWLER_K8S = path('assets/prowler-ocsf-kubernetes.json');
const FEEDS = [
  path('kev/known_exploited_vulnerabilities.2025.01.24.excerpt.json'),
  path('epss/epss_scores-2026-09-29.excerpt-a.csv'),
  path('exploitdb/files_exploits.excerpt-a.csv'),
];
const CHECK = 'iam_role_administratoraccess_policy_permissive_trust_relationship';

interface Risk {
  id: string;
  riskTypeId: string;
  primaryAssetId: string;
  lifecycleState: string;
  score: number;
  likelihood: number;
  impact: number;
  severityLevel: string;
  description: string;
  resolutions: { type: string; title: string }[];
  factors: { key: string; value: number; meta: { side: string } & Record<string, unknown> }[];
  primaryAsset: { id: string; name: string; type: string; riskScore: number } | null;
}

let ctx: TestContext;
let tenant: string;
let key: string;
beforeEach(async () => {
  ctx = await setup();
  tenant = (await runCli('tenants', 'create', '--name', 'scans', '--db', ctx.url)).stdout.trim();
  key = await createKey(ctx.storage, tenant);
});
afterEach(async () => ctx.close());

const ingest = async (...files: string[]) => {
  const run = await runCli(
    'ingest',
    '--tenant',
    tenant,
    '--provider',
    'AWS',
    '--region',
    'eu-west-1',
    '--db',
    ctx.url,
    ...files,
  );
  expect(run.stderr).not.toContain('rejected');
  expect(run.code).toBe(0);
  return run;
};
const risks = async (query = '') => {
  const res = await ctx.app.inject({
    method: 'GET',
    url: `/v1/tenant/risks?include=primaryAsset&perPage=100${query}`,
    headers: { authorization: `Bearer ${key}` },
  });
  expect(res.statusCode).toBe(200);
  return res.json<{ data: Risk[]; meta: { total: number } }>();
};
const sideSum = (risk: Risk, side: string) =>
  Math.min(10, risk.factors.filter((f) => f.meta.side === side).reduce((n, f) => n + Math.round(f.value * 10), 0) / 10);

describe('risks from scanner reports', () => {
  it('feeds, a Trivy image and Prowler reports give explained risks on the ingested assets', async () => {
    expect((await runCli('feeds', 'load', '--db', ctx.url, ...FEEDS)).code).toBe(0);
    const run = await ingest(TEAMDOJO, PROWLER_AWS, PROWLER_K8S);
    expect(run.stderr).toMatch(/\nrisks: \d+ on the \d+ assets written \(\d+ new, 0 changed, 0 gone\)\n$/);

    const { data, meta } = await risks();
    expect(meta.total).toBe(data.length);
    // The image's known-exploited freetype finding (CVE-2020-15999 is in the KEV excerpt).
    const kev = data.find((r) => r.riskTypeId === 'secinv.kev-vulnerability');
    expect(kev?.primaryAsset?.name).toBe('teamdojo:latest');
    expect(kev?.primaryAssetId).toBe(kev?.primaryAsset?.id);
    expect(kev?.description).toContain('CVE-2020-15999');
    expect(kev?.factors.find((f) => f.key === 'knownExploited')?.meta).toMatchObject({
      vulnerabilityIds: expect.arrayContaining(['CVE-2020-15999']) as unknown,
    });
    expect(kev?.resolutions.map((r) => r.title)).toContain(
      'Upgrade freetype from 2.9.1-r2 to 2.9.1-r3 (fixes CVE-2020-15999).',
    );
    // Prowler's failed check on the IAM role it names.
    const check = data.find((r) => r.riskTypeId === CHECK);
    expect(check?.primaryAsset).toMatchObject({
      id: `sirn:assets:${tenant}:aws:iam:role:us-east-1:arn:aws:iam::123456789012:role/myAdministratorExecutionRole`,
      type: 'AWS::IAM::Role',
    });
    expect(check?.resolutions[0]?.title).toMatch(/^Apply the principle of least privilege/);
    // Kubernetes checks from the OCSF sample, one risk per check and resource.
    expect(data.filter((r) => r.primaryAsset?.type.startsWith('Kubernetes::')).length).toBeGreaterThan(0);
    // Every score follows docs/RISKS.md: sides add up, score = L × I / 10, CVSS bands.
    for (const r of data) {
      expect(sideSum(r, 'likelihood')).toBeCloseTo(r.likelihood, 10);
      expect(sideSum(r, 'impact')).toBeCloseTo(r.impact, 10);
      expect(r.score).toBe(Math.round(r.likelihood * r.impact) / 10);
      const band = r.score >= 9 ? 'CRITICAL' : r.score >= 7 ? 'HIGH' : r.score >= 4 ? 'MEDIUM' : 'LOW';
      expect(r.severityLevel).toBe(band);
      // A scanned asset's riskScore is the highest score of its OPEN risks.
      const top = Math.max(...data.filter((o) => o.primaryAssetId === r.primaryAssetId).map((o) => o.score));
      expect(r.primaryAsset?.riskScore).toBe(top);
    }
  });

  it('a dismissed risk stays dismissed after a re-ingest; a scan with the package fixed takes the risk away', async () => {
    expect((await runCli('feeds', 'load', '--db', ctx.url, ...FEEDS)).code).toBe(0);
    await ingest(TEAMDOJO, PROWLER_AWS);
    const before = await risks();
    const kev = before.data.find((r) => r.riskTypeId === 'secinv.kev-vulnerability')!;
    expect(kev.id).toBe(derivedRiskId(tenant, 'secinv.kev-vulnerability', kev.primaryAssetId));
    const check = before.data.find((r) => r.riskTypeId === CHECK)!;
    const dismissed = await runCli(
      'risks',
      'dismiss',
      check.id,
      '--tenant',
      tenant,
      '--as',
      'accepted',
      '--db',
      ctx.url,
    );
    expect(dismissed.code).toBe(0);

    // The same reports again write nothing, so no risk is derived again (docs/DESIGN.md §86)…
    const again = await ingest(TEAMDOJO, PROWLER_AWS);
    expect(again.stderr).toMatch(/\nrisks: 0 on the 0 assets written \(0 new, 0 changed, 0 gone\)\n$/);
    // …and deriving every risk of the tenant again keeps the dismissal.
    const derived = await runCli('risks', 'derive', '--tenant', tenant, '--db', ctx.url);
    expect(derived.code).toBe(0);
    expect(derived.stderr + derived.stdout).toMatch(/derived: 2 assets, \d+ risks \(0 new, 0 changed, 0 gone\)/);
    const after = await risks();
    expect(after.data.find((r) => r.id === check.id)?.lifecycleState).toBe('DISMISSED_ACCEPTED');
    expect(after.data.map((r) => [r.id, r.score])).toEqual(before.data.map((r) => [r.id, r.score]));

    // The same image scanned again after freetype was upgraded: no KEV finding, no KEV risk.
    const report = JSON.parse(readFileSync(TEAMDOJO, 'utf8')) as {
      Results: { Vulnerabilities?: { VulnerabilityID: string }[] }[];
    };
    for (const result of report.Results)
      result.Vulnerabilities = result.Vulnerabilities?.filter((v) => v.VulnerabilityID !== 'CVE-2020-15999');
    const fixed = join(ctx.dir, 'teamdojo-fixed.json');
    writeFileSync(fixed, JSON.stringify(report));
    const rescan = await ingest(fixed);
    expect(rescan.stderr).toContain('1 gone');
    const now = await risks();
    expect(now.data.map((r) => r.id)).not.toContain(kev.id);
    expect(now.data.find((r) => r.id === check.id)?.lifecycleState).toBe('DISMISSED_ACCEPTED');
  });
});
