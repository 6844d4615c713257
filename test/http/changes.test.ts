// The change log (pipeline.md §4) through app.inject on a real database: what each write appends (a scan by either
// path, a re-scan that resolves and opens, a finding reported again), nothing for a write that changes nothing or rolls
// back, one scan's diff, the cursor that is never null, and the answers to bad cursors and filters.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IngestOptions } from '../../src/ingest/ingest.js';
import { Readable } from 'node:stream';
import { loadFeedFiles } from '../../src/feeds/load.js';
import { scanRunner } from '../../src/ingest/scan-runner.js';
import { A1, fixture, R1, riskFixture } from '../fixtures.js';
import { createKey, importRecords, setupWithKeys, TENANT_A, TENANT_B, type TestContext } from '../helpers.js';
import { kevCatalog } from '../feeds/kev-catalog.js';
import { ingestTexts } from '../ingest/run.js';
import { TEAMDOJO, type Change, type ChangePage } from '../changes.js';

type Json = Record<string, unknown>;

const IMAGE = `sirn:assets:${TENANT_A}:aws:ecr:image:us-east-1:teamdojo:latest`;

/** The report with one vulnerability dropped and another added (a re-scan after an upgrade and a new advisory). */
function rescanned(): string {
  const report = JSON.parse(TEAMDOJO) as { Results: { Vulnerabilities?: Json[] | null }[] };
  const os = report.Results[0]!.Vulnerabilities!;
  const dropped = os.findIndex((v) => v.VulnerabilityID === 'CVE-2019-12900');
  os.splice(dropped, 1, { ...os[0]!, VulnerabilityID: 'CVE-2026-0001' });
  return JSON.stringify(report);
}

let ctx: TestContext;
let key: string;
let keyB: string;
let ingestKey: string;
beforeAll(async () => {
  const set = await setupWithKeys(fixture, [TENANT_A, TENANT_B] as const);
  ctx = set.ctx;
  [key, keyB] = set.keys;
  ingestKey = await createKey(ctx.storage, TENANT_A, { scopes: ['ingest'] });
});
afterAll(async () => ctx.close());

const get = (url: string, as = key) => ctx.app.inject({ url, headers: { authorization: `Bearer ${as}` } });
const page = async (url: string, as = key): Promise<ChangePage> => {
  const res = await get(url, as);
  expect(res.statusCode, res.body).toBe(200);
  return res.json<ChangePage>();
};
/** Every change after the cursor (all of them without one), following meta.cursor to the end. */
async function follow(cursor?: string, query = ''): Promise<{ changes: Change[]; cursor: string }> {
  const changes: Change[] = [];
  for (;;) {
    const sep = query === '' ? '' : `&${query}`;
    const next = await page(`/v1/tenant/changes?perPage=7${cursor === undefined ? '' : `&cursor=${cursor}`}${sep}`);
    cursor = next.meta.cursor;
    expect(cursor).toEqual(expect.any(String));
    if (next.data.length === 0) return { changes, cursor };
    changes.push(...next.data);
  }
}
const ingest = (text: string, options: Partial<IngestOptions> = {}) =>
  ingestTexts(
    ctx.storage,
    { 'teamdojo.json': text },
    { provider: 'AWS', region: 'us-east-1', recordScans: true, ...options },
  );
const summary = (changes: Change[]) => changes.map((c) => `${c.type} ${c.vulnerabilityId ?? c.assetId ?? c.riskId}`);

describe('GET /v1/tenant/changes', () => {
  let head: string;
  let scanId: string;

  it('holds what the import of the inventory created, each with cause import', async () => {
    const { changes, cursor } = await follow();
    head = cursor;
    const assets = (await page('/v1/tenant/assets?perPage=1')).meta as unknown as { total: number };
    expect(changes.filter((c) => c.type === 'asset.created')).toHaveLength(assets.total);
    expect(new Set(changes.map((c) => c.type))).toEqual(new Set(['asset.created', 'finding.opened']));
    expect(changes.every((c) => (c.cause as { kind: string }).kind === 'import')).toBe(true);
    // Positions are distinct and in order.
    const seqs = changes.map((c) => Number(c.seq));
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(seqs.length);
    // Another tenant's log is its own.
    const other = await page('/v1/tenant/changes?perPage=1000&types=asset.created', keyB);
    const assetsOfB = (await page('/v1/tenant/assets?perPage=1000', keyB)) as unknown as { data: Json[] };
    expect(other.data.map((c) => c.assetId).sort()).toEqual(assetsOfB.data.map((a) => a.id).sort());
  });

  it('a scan appends the asset created and a finding opened per vulnerability, with the scan as cause', async () => {
    const result = await ingest(TEAMDOJO);
    expect(result.problems).toEqual([]);
    const { changes, cursor } = await follow(head);
    head = cursor;
    expect(summary(changes.filter((c) => !c.type.startsWith('risk.')))).toEqual([
      `asset.created ${IMAGE}`,
      'finding.opened CVE-2018-11771',
      'finding.opened CVE-2018-1324',
      'finding.opened CVE-2019-12900',
      'finding.opened CVE-2020-15999',
      'finding.opened CVE-2020-28196',
    ]);
    scanId = String(changes[0]!.cause.scanId);
    expect(changes.every((c) => c.cause.kind === 'scan' && c.cause.scanId === scanId)).toBe(true);
    const scan = (await get(`/v1/tenant/scans/${scanId}`)).json<{ data: { name: string } }>().data;
    expect(scan.name).toBe('teamdojo.json');
    // The record is the finding as served.
    const opened = changes.find((c) => c.vulnerabilityId === 'CVE-2020-15999')!;
    const served = await page(
      `/v1/tenant/vulnerabilities?assetIds=${encodeURIComponent(IMAGE)}&vulnerabilityIds=CVE-2020-15999`,
    );
    expect(opened.record).toEqual((served as unknown as { data: Json[] }).data[0]);
    expect(opened.fields).toEqual([]);
  });

  it('the same report again appends nothing; a dry run appends nothing', async () => {
    await ingest(TEAMDOJO, { now: () => new Date('2026-11-01T10:00:00Z') });
    await ingest(rescanned(), { dryRun: true, recordScans: false });
    const after = await page(`/v1/tenant/changes?cursor=${head}`);
    expect(after.data).toEqual([]);
    expect(after.meta.cursor).toBe(head);
  });

  it('a re-scan that no longer lists a finding resolves it (record as it left) and opens the new one', async () => {
    const before = (await page(
      `/v1/tenant/vulnerabilities?assetIds=${encodeURIComponent(IMAGE)}&vulnerabilityIds=CVE-2019-12900`,
    )) as unknown as { data: Json[] };
    await ingest(rescanned(), { now: () => new Date('2026-11-02T10:00:00Z') });
    const { changes, cursor } = await follow(head);
    head = cursor;
    const findings = changes.filter((c) => c.type.startsWith('finding.'));
    expect(summary(findings)).toEqual(['finding.opened CVE-2026-0001', 'finding.resolved CVE-2019-12900']);
    expect(findings[1]!.record).toEqual(before.data[0]);
    // Observed again with nothing tracked changed: the other findings are no change.
    expect(changes.some((c) => c.type === 'finding.updated')).toBe(false);
  });

  it('a finding reported again is reopened with its first firstObservedAt', async () => {
    await ingest(TEAMDOJO, { now: () => new Date('2026-11-03T10:00:00Z') });
    const { changes: all, cursor } = await follow(head);
    head = cursor;
    const changes = all.filter((c) => c.type === 'finding.reopened' || c.type === 'finding.resolved');
    expect(summary(changes)).toEqual(['finding.reopened CVE-2019-12900', 'finding.resolved CVE-2026-0001']);
    expect(changes[0]!.record).toMatchObject({ firstObservedAt: '2026-11-01T10:00:00.000Z' });
  });

  it('an uploaded scan names its scan and key; GET /scans/{id}/changes is its diff', async () => {
    const upload = await ctx.app.inject({
      method: 'POST',
      url: '/v1/tenant/scans?provider=AWS&region=us-east-1',
      headers: { authorization: `Bearer ${ingestKey}`, 'content-type': 'application/json' },
      payload: rescanned(),
    });
    expect(upload.statusCode, upload.body).toBe(202);
    const { id, keyId } = upload.json<{ data: { id: string; keyId: string } }>().data;
    await scanRunner(ctx.storage, { owner: 'test', leaseMs: 60_000, pollMs: 1000 }).drain();
    const diff = await page(`/v1/tenant/scans/${id}/changes`);
    expect(summary(diff.data.filter((c) => c.type.startsWith('finding.')))).toEqual([
      'finding.reopened CVE-2026-0001',
      'finding.resolved CVE-2019-12900',
    ]);
    expect(diff.data.every((c) => c.cause.scanId === id && c.cause.keyId === keyId)).toBe(true);
    const again = await page(`/v1/tenant/scans/${id}/changes?cursor=${diff.meta.cursor}`);
    expect(again.data).toEqual([]);
    // The first scan's diff is still its own.
    const first = await page(`/v1/tenant/scans/${scanId}/changes?perPage=1000`);
    expect(first.data.filter((c) => c.type === 'finding.opened')).toHaveLength(5);
  });

  it('a run of several files gives the changes of each file its own scan', async () => {
    const other = readFileSync(
      new URL('../fixtures/ingest/trivy/trivy-image-example-app-all-statuses.json', import.meta.url),
      'utf8',
    );
    head = (await follow(head)).cursor;
    const result = await ingestTexts(
      ctx.storage,
      { 'first.json': TEAMDOJO, 'second.json': other },
      { provider: 'AWS', region: 'us-east-1', recordScans: true, now: () => new Date('2026-11-04T10:00:00Z') },
    );
    expect(result.problems).toEqual([]);
    const { changes, cursor } = await follow(head);
    head = cursor;
    const scans = (await page('/v1/tenant/scans?perPage=100')) as unknown as { data: { id: string; name: string }[] };
    const idOf = (name: string) => scans.data.find((s) => s.name === name)!.id;
    const second = result.files.find((f) => f.file === 'second.json')!.assetId;
    expect(changes.length).toBeGreaterThan(2);
    for (const c of changes)
      expect(c.cause.scanId, `${c.type} ${c.assetId}`).toBe(idOf(c.assetId === second ? 'second.json' : 'first.json'));
    expect(changes.some((c) => c.assetId === IMAGE)).toBe(true);
    expect(changes.some((c) => c.assetId === second)).toBe(true);
  });

  it('a KEV load that lists a finding appends finding.updated (hasKev) with the feed as cause; loading it again, nothing', async () => {
    head = (await follow(head)).cursor;
    const catalog = kevCatalog('2026.11.20', ['CVE-2020-15999']);
    const load = () =>
      loadFeedFiles(ctx.storage, [{ name: 'kev.json', open: () => Readable.from([Buffer.from(catalog)]) }]);
    expect((await load()).problems).toEqual([]);
    const { changes, cursor } = await follow(head);
    head = cursor;
    const findings = changes.filter((c) => c.type.startsWith('finding.'));
    expect(summary(findings)).toEqual(['finding.updated CVE-2020-15999']);
    expect(findings[0]).toMatchObject({
      assetId: IMAGE,
      cause: { kind: 'feed', feed: 'kev', feedVersion: '2026.11.20' },
      fields: [{ name: 'hasKev', before: false, after: true }],
      record: { vulnerabilityId: 'CVE-2020-15999', hasKev: true },
    });
    expect(changes.every((c) => c.cause.kind === 'feed')).toBe(true);
    expect((await load()).problems).toEqual([]);
    expect((await page(`/v1/tenant/changes?cursor=${head}`)).data).toEqual([]);
  });

  it('risks: imported (opened), dismissed and reopened by a user, derived by the rules', async () => {
    head = (await follow(head)).cursor;
    expect(
      (
        await importRecords(
          ctx.storage,
          riskFixture.filter((r) => r[1].tenantId === TENANT_A),
        )
      ).problems,
    ).toEqual([]);
    const imported = await follow(head);
    expect(imported.changes.length).toBeGreaterThan(0);
    expect(imported.changes.every((c) => c.type === 'risk.opened' && c.cause.kind === 'import')).toBe(true);
    const opened = imported.changes.find((c) => c.riskId === R1)!;
    expect(opened.record).toMatchObject({ id: R1, lifecycleState: 'OPEN' });
    expect(opened.assetId).toBe(A1);

    expect(await ctx.storage.setRiskLifecycle(TENANT_A, R1, 'DISMISSED_ACCEPTED', '2026-11-05T10:00:00.000Z')).toBe(
      true,
    );
    const dismissed = await follow(imported.cursor);
    expect(dismissed.changes.map((c) => [c.type, c.riskId, c.cause.kind])).toEqual([['risk.dismissed', R1, 'user']]);
    expect(dismissed.changes[0]!.fields).toEqual([
      { name: 'lifecycleState', before: 'OPEN', after: 'DISMISSED_ACCEPTED' },
    ]);
    // The same state again changes nothing.
    await ctx.storage.setRiskLifecycle(TENANT_A, R1, 'DISMISSED_ACCEPTED', '2026-11-05T11:00:00.000Z');
    expect((await page(`/v1/tenant/changes?cursor=${dismissed.cursor}`)).data).toEqual([]);
    await ctx.storage.setRiskLifecycle(TENANT_A, R1, 'OPEN', '2026-11-05T12:00:00.000Z');
    const reopened = await follow(dismissed.cursor);
    expect(reopened.changes.map((c) => [c.type, c.riskId])).toEqual([['risk.reopened', R1]]);

    await ctx.storage.deriveRisks(TENANT_A, '2026-11-05T13:00:00.000Z');
    const derived = await follow(reopened.cursor);
    head = derived.cursor;
    expect(derived.changes.every((c) => c.cause.kind === 'rule')).toBe(true);
    const risks = (await page('/v1/tenant/risks?perPage=100')) as unknown as { data: Json[] };
    // Every risk there is was opened in the log, by whichever write made it.
    const everOpened = new Set((await follow(undefined, 'types=risk.opened')).changes.map((c) => c.riskId));
    expect(risks.data.length).toBeGreaterThan(0);
    for (const risk of risks.data) expect(everOpened.has(String(risk.id)), String(risk.id)).toBe(true);
  });

  it('filters by asset, vulnerability and since', async () => {
    const byVulnerability = await follow(undefined, 'vulnerabilityIds=CVE-2019-12900');
    expect(byVulnerability.changes.map((c) => c.type)).toEqual([
      'finding.opened',
      'finding.resolved',
      'finding.reopened',
      'finding.resolved',
      'finding.reopened',
    ]);
    const byAsset = await follow(undefined, `assetIds=${encodeURIComponent(IMAGE)}&types=asset.created`);
    expect(byAsset.changes).toHaveLength(1);
    const since = await follow(undefined, 'since=2100-01-01T00:00:00Z');
    expect(since.changes).toEqual([]);
  });

  it('answers bad cursors and filters 400, and another tenant a scan it does not have 404', async () => {
    const bad = async (url: string, field: string, as = key) => {
      const res = await get(url, as);
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json<{ errors: { field: string }[] }>().errors[0]!.field).toBe(field);
    };
    await bad(`/v1/tenant/changes?cursor=${head}x`, 'cursor');
    await bad(`/v1/tenant/changes?cursor=${head}`, 'cursor', keyB);
    await bad(`/v1/tenant/changes?cursor=${head}&types=finding.opened`, 'cursor');
    await bad('/v1/tenant/changes?types=finding.closed', 'types');
    await bad('/v1/tenant/changes?perPage=1001', 'perPage');
    await bad('/v1/tenant/changes?since=yesterday', 'since');
    const missing = await get(`/v1/tenant/scans/${scanId}/changes`, keyB);
    expect(missing.statusCode).toBe(404);
  });
});
