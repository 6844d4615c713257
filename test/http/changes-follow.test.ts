// Snapshot then follow (pipeline.md §4): a client exports a list, then follows the change log from the export's
// `Secinv-Changes-Cursor`. An import commits in the middle of the export (deterministically, right after the export's
// first statement); the export holds none of it, the changes after the header hold all of it, and applying them to the
// export gives exactly what a later export holds: nothing missed, nothing seen twice.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, importRecords, setup, TENANT_A, TENANT_B, type TestContext } from '../helpers.js';
import { assetRecord, findingRecord, tenantRecord, type ImportRecord } from '../records.js';

type Json = Record<string, unknown>;
interface Change {
  type: string;
  assetId: string | null;
  vulnerabilityId: string | null;
  record: Json | null;
}

let ctx: TestContext;
let key: string;
let keyB: string;
/** When set, runs once, after the next statement that matches it has run and before the request's next statement. */
let interleave: { match: RegExp; write: () => Promise<void> } | undefined;

const OBSERVED = { firstObservedAt: '2024-01-01T00:00:00Z', lastObservedAt: '2024-01-02T00:00:00Z' };
/** Asset ids in list order (`id` ascending): more than an export's first batch of 100. */
const assetId = (n: number) => `sirn:assets:follow-${String(n).padStart(4, '0')}`;

const importing = async (records: ImportRecord[]) =>
  expect((await importRecords(ctx.storage, records)).problems).toEqual([]);

beforeAll(async () => {
  ctx = await setup(undefined, {
    onQuery: async (sql) => {
      if (!interleave || !interleave.match.test(sql)) return;
      const { write } = interleave;
      interleave = undefined;
      await write();
    },
  });
  const records: ImportRecord[] = [tenantRecord(), tenantRecord(TENANT_B)];
  for (let n = 1; n <= 400; n += 1)
    records.push(assetRecord(assetId(n), OBSERVED), findingRecord(assetId(n), 'CVE-2024-0001', 'LOW', OBSERVED));
  await importing(records);
  key = await createKey(ctx.storage, TENANT_A);
  keyB = await createKey(ctx.storage, TENANT_B);
});
afterAll(async () => ctx.close());

/** Another tenant's write, new assets late in the order, and existing records changed late in the order. */
async function racingWrite(round: number): Promise<void> {
  await importing([assetRecord(`sirn:assets:other-${round}`, { ...OBSERVED, tenantId: TENANT_B })]);
  const records: ImportRecord[] = [];
  for (let n = 1; n <= 5; n += 1) {
    const id = assetId(400 + round * 10 + n);
    records.push(assetRecord(id, OBSERVED), findingRecord(id, 'CVE-2024-0002', 'HIGH', OBSERVED));
  }
  for (const n of [390 - round, 395 - round])
    records.push(
      assetRecord(assetId(n), { ...OBSERVED, isPubliclyExposed: true }),
      findingRecord(assetId(n), 'CVE-2024-0001', 'CRITICAL', OBSERVED),
    );
  await importing(records);
}

const get = (url: string, as = key) => ctx.app.inject({ url, headers: { authorization: `Bearer ${as}` } });

/** An export's records by key, and its header. */
async function exported(url: string, keyOf: (record: Json) => string) {
  const res = await get(url);
  expect(res.statusCode, res.body).toBe(200);
  const cursor = res.headers['secinv-changes-cursor'];
  expect(cursor).toEqual(expect.any(String));
  const records = new Map<string, Json>();
  for (const line of res.body.split('\n').filter((l) => l !== '')) {
    const record = JSON.parse(line) as Json;
    records.set(keyOf(record), record);
  }
  return { records, cursor: cursor as string };
}

/** Every change after the cursor, following meta.cursor until caught up. */
async function changesAfter(cursor: string, query: string): Promise<Change[]> {
  const changes: Change[] = [];
  for (;;) {
    const res = await get(`/v1/tenant/changes?perPage=50&${query}&cursor=${encodeURIComponent(cursor)}`);
    expect(res.statusCode, res.body).toBe(200);
    const page = res.json<{ data: Change[]; meta: { cursor: string } }>();
    if (page.data.length === 0) return changes;
    changes.push(...page.data);
    cursor = page.meta.cursor;
  }
}

const lists = [
  {
    name: 'assets',
    url: '/v1/tenant/assets?format=ndjson',
    // The export's first batch; what the write changes comes later in the order.
    firstBatch: /^select "assets"\."id"/,
    kind: 'asset',
    keyOf: (record: Json) => String(record.id),
    keyOfChange: (change: Change) => change.assetId!,
    types: 'asset.created,asset.updated,asset.removed',
    leaves: ['asset.removed'],
  },
  {
    name: 'vulnerabilities',
    url: '/v1/tenant/vulnerabilities?format=ndjson&sortBy=severityLevelValue&sortOrder=ASC',
    firstBatch: /from "vulnerabilities"/,
    kind: 'finding',
    keyOf: (record: Json) => `${String(record.assetId)} ${String(record.vulnerabilityId)}`,
    keyOfChange: (change: Change) => `${change.assetId} ${change.vulnerabilityId}`,
    types: 'finding.opened,finding.updated,finding.resolved,finding.reopened',
    leaves: ['finding.resolved'],
  },
];

describe.each(lists.map((list, round) => ({ ...list, round: round + 1 })))(
  'an export of $name, then the changes after its header',
  ({ url, firstBatch, kind, keyOf, keyOfChange, types, leaves, round }) => {
    it('miss nothing and repeat nothing while an import commits in the middle of the export', async () => {
      interleave = { match: firstBatch, write: () => racingWrite(round) };
      const snapshot = await exported(url, keyOf);
      expect(interleave).toBeUndefined();
      expect(snapshot.records.size).toBeGreaterThan(100);
      // None of the write: its new records are missing, its changed ones as they were.
      const created = assetId(400 + round * 10 + 1);
      expect([...snapshot.records.keys()].some((k) => k.startsWith(created))).toBe(false);
      const changedBefore = [...snapshot.records.values()].find((r) => keyOf(r).startsWith(assetId(390 - round)));
      expect(changedBefore).toBeDefined();
      expect(changedBefore![kind === 'asset' ? 'isPubliclyExposed' : 'severityLevel']).toBe(
        kind === 'asset' ? false : 'LOW',
      );

      const changes = await changesAfter(snapshot.cursor, `types=${types}`);
      expect(changes.length).toBeGreaterThan(0);
      const state = new Map(snapshot.records);
      for (const change of changes) {
        const at = keyOfChange(change);
        // Nothing twice: a record created after the snapshot is not in it; one changed after it is.
        if (change.type.endsWith('.created') || change.type.endsWith('.opened')) expect(state.has(at)).toBe(false);
        else expect(state.has(at)).toBe(true);
        if (leaves.includes(change.type)) state.delete(at);
        else state.set(at, change.record!);
      }
      const now = await exported(url, keyOf);
      expect(now.records.size).toBe(snapshot.records.size + 5);
      expect(Object.fromEntries(state)).toEqual(Object.fromEntries(now.records));
      // Caught up: nothing after the later export's header.
      expect(await changesAfter(now.cursor, `types=${kind}.updated`)).toEqual([]);
    });
  },
);

describe('the Secinv-Changes-Cursor header', () => {
  it('is on every list page and export, kept with a kept body, bound to its tenant', async () => {
    for (const list of ['assets', 'vulnerabilities', 'risks']) {
      const first = await get(`/v1/tenant/${list}?perPage=3`);
      expect(first.statusCode, first.body).toBe(200);
      const cursor = first.headers['secinv-changes-cursor'];
      expect(cursor).toEqual(expect.any(String));
      // The same page again, answered from the kept body, with the position that body was read at.
      expect((await get(`/v1/tenant/${list}?perPage=3`)).headers['secinv-changes-cursor']).toBe(cursor);
      const compressed = await ctx.app.inject({
        url: `/v1/tenant/${list}?perPage=3`,
        headers: { authorization: `Bearer ${key}`, 'accept-encoding': 'gzip' },
      });
      expect(compressed.headers['secinv-changes-cursor']).toBe(cursor);
      expect((await get(`/v1/tenant/${list}?format=csv`)).headers['secinv-changes-cursor']).toBe(cursor);
      // Caught up at once, with any filters; another tenant's key cannot use it.
      const follow = await get(`/v1/tenant/changes?types=risk.opened&cursor=${encodeURIComponent(String(cursor))}`);
      expect(follow.json()).toMatchObject({ data: [] });
      // A page of the log tells the same position: the head it was read at.
      expect((await get('/v1/tenant/changes?perPage=1')).headers['secinv-changes-cursor']).toBe(cursor);
      const other = await get(`/v1/tenant/changes?cursor=${encodeURIComponent(String(cursor))}`, keyB);
      expect(other.statusCode).toBe(400);
      expect(other.json()).toMatchObject({ errors: [{ code: 'invalid_cursor', field: 'cursor' }] });
    }
  });

  it('moves with a write, and an export of the changes ends at its header', async () => {
    const before = (await get('/v1/tenant/assets?perPage=1')).headers['secinv-changes-cursor'] as string;
    await importing([assetRecord(assetId(999), OBSERVED)]);
    const after = (await get('/v1/tenant/assets?perPage=1')).headers['secinv-changes-cursor'] as string;
    expect(after).not.toBe(before);
    const res = await get(`/v1/tenant/changes?format=ndjson&cursor=${encodeURIComponent(before)}`);
    expect(res.statusCode, res.body).toBe(200);
    const lines = res.body
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Change);
    expect(lines.map((c) => [c.type, c.assetId])).toEqual([['asset.created', assetId(999)]]);
    expect(res.headers['secinv-changes-cursor']).toBe(after);
    // As CSV: one column per field of a change, nested ones as JSON.
    const csv = await get(`/v1/tenant/changes?format=csv&cursor=${encodeURIComponent(before)}`);
    const [header, row] = csv.body.replace(/^\uFEFF/, '').split('\r\n');
    expect(header).toBe('seq,at,type,assetId,vulnerabilityId,riskId,cause,fields,record');
    expect(row).toContain(`,asset.created,${assetId(999)},,,`);
    // perPage shapes a page, which an export has not.
    const paged = await get('/v1/tenant/changes?format=csv&perPage=5');
    expect(paged.statusCode).toBe(400);
    expect(paged.json()).toMatchObject({ errors: [{ code: 'invalid_parameter', field: 'perPage' }] });
  });
});
