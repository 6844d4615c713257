// Retention of the change log on each database: a tenant's changes committed before the cutoff are deleted, oldest
// first, in batches of a transaction each; the younger ones and another tenant's stay; the tenant's pruned position is
// the last one deleted, so a read from it is complete and one from before it is gone. On PostgreSQL, two servers
// pruning at once, and a prune beside a write holding the tenant, finish without a deadlock or a gap.
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { connect } from '../../../src/storage/db/connect.js';
import { CHANGES_PRUNE_CLASS } from '../../../src/storage/tx/turns.js';
import type { Storage } from '../../../src/storage/index.js';
import { openStorage } from '../../../src/storage/index.js';
import { importRecords, openTestStorage, TENANT_A, TENANT_B, TEST_DIALECTS } from '../../helpers.js';
import { TEAMDOJO } from '../../changes.js';
import { ingestTexts } from '../../ingest/run.js';
import { assetRecord, riskRecord, tenantRecord, type ImportRecord } from '../../records.js';

interface Change {
  seq: string;
  at: string;
  assetId: string | null;
}

/** Every change of the tenant after `after` (from the start of what is kept without it), or that the read is gone. */
async function changes(storage: Storage, tenantId: string, after?: number): Promise<Change[] | 'gone'> {
  const page = await storage.listChanges({ tenantId, dataVersion: 0 }, { perPage: 1000 }, after);
  if (page.gone) return 'gone';
  return page.items.map((item) => JSON.parse(item.toString()) as Change);
}
const kept = async (storage: Storage, tenantId: string, after?: number): Promise<Change[]> => {
  const read = await changes(storage, tenantId, after);
  if (read === 'gone') throw new Error('the read is gone');
  return read;
};
/** A third tenant, after A in the order of ids that a prune goes through. */
const TENANT_C = '33333333-3333-4333-8333-333333333333';
const seqs = (list: Change[]) => list.map((c) => Number(c.seq));

/** The tenant's assets `prefix-0` … as import records of that tenant. */
const assets = (tenantId: string, prefix: string, count: number): ImportRecord[] => [
  tenantRecord(tenantId),
  ...Array.from({ length: count }, (_, i) => assetRecord(`sirn:${prefix}-${i}`, { tenantId })),
];

/** Imports the records, a write of its own: its changes are timed when it settles, a few ms before the next write. */
async function write(storage: Storage, records: ImportRecord[]): Promise<void> {
  const { problems } = await importRecords(storage, records);
  expect(problems).toEqual([]);
  await new Promise((resolve) => setTimeout(resolve, 3));
}

/**
 * Tenant A: 20 assets created (old), then tenant B: 5 (at the cutoff), then A again: 3 (young). The cutoff is the time
 * of B's first change, so A's first 20 changes are older than it and everything after is not.
 */
async function oldAndYoung(storage: Storage): Promise<{ cutoff: string; oldA: number[]; youngA: number[] }> {
  await write(storage, assets(TENANT_A, 'old', 20));
  await write(storage, assets(TENANT_B, 'b', 5));
  await write(storage, assets(TENANT_A, 'young', 3));
  const cutoff = (await kept(storage, TENANT_B))[0]!.at;
  const all = await kept(storage, TENANT_A);
  const oldA = seqs(all.filter((c) => c.at < cutoff));
  const youngA = seqs(all.filter((c) => c.at >= cutoff));
  // The writes' times are far enough apart for the test to mean something: 20 old, 3 young.
  expect([oldA.length, youngA.length]).toEqual([20, 3]);
  return { cutoff, oldA, youngA };
}

describe.each(TEST_DIALECTS)('change log retention on %s', (dialect) => {
  it('deletes the changes older than the cutoff, a batch per transaction, and moves the pruned position', async () => {
    const opened = await openTestStorage(dialect);
    const statements: string[] = [];
    const counted = await openStorage(opened.url, { onQuery: (sql) => void statements.push(sql) });
    try {
      const { storage } = opened;
      const { cutoff, oldA, youngA } = await oldAndYoung(storage);
      const before = await kept(storage, TENANT_B);

      expect(await counted.pruneChanges(cutoff, { batch: 7 })).toBe(20);
      // Tenant A's 20 in batches of 7 (7, 7, 6): three deletions; tenant B has nothing older.
      expect(statements.filter((sql) => /^delete from "changes"/.test(sql))).toHaveLength(3);
      expect(seqs(await kept(storage, TENANT_A))).toEqual(youngA);
      expect(await kept(storage, TENANT_B)).toEqual(before);

      // The pruned position is the last one deleted: a read from it misses nothing, one from before it is gone.
      const pruned = oldA[oldA.length - 1]!;
      expect(seqs(await kept(storage, TENANT_A, pruned))).toEqual(youngA);
      expect(await changes(storage, TENANT_A, pruned - 1)).toBe('gone');
      expect(await changes(storage, TENANT_A, 0)).toBe('gone');
      // Tenant B's log was not pruned: a read from its start is still whole.
      expect(await kept(storage, TENANT_B, 0)).toEqual(before);

      // Again, and with an earlier cutoff: nothing to delete, and the position does not move back.
      expect(await counted.pruneChanges(cutoff)).toBe(0);
      expect(await counted.pruneChanges('2000-01-01T00:00:00.000Z')).toBe(0);
      expect(seqs(await kept(storage, TENANT_A, pruned))).toEqual(youngA);
      expect(await changes(storage, TENANT_A, pruned - 1)).toBe('gone');

      // New writes go on from the head, after the pruned part.
      await write(storage, assets(TENANT_A, 'later', 2));
      const head = youngA[youngA.length - 1]!;
      expect(seqs(await kept(storage, TENANT_A, pruned))).toEqual([...youngA, head + 1, head + 2]);
    } finally {
      await counted.close();
      await opened.dispose();
    }
  });

  it('stops between two batches when told to, each batch moving the pruned position with it', async () => {
    const opened = await openTestStorage(dialect);
    try {
      const { storage } = opened;
      const { cutoff, oldA } = await oldAndYoung(storage);
      // Asked before each batch; tenants go in the order of their ids, A first.
      let batches = 0;
      const stopped = () => batches++ >= 1;
      expect(await storage.pruneChanges(cutoff, { batch: 8, stopped })).toBe(8);
      // The first 8 positions are gone, the 9th is the first kept: a cursor at 8 is complete.
      expect(seqs(await kept(storage, TENANT_A, oldA[7])).slice(0, 1)).toEqual([oldA[8]]);
      expect(await changes(storage, TENANT_A, oldA[6])).toBe('gone');
      // The next run goes on where this one stopped.
      expect(await storage.pruneChanges(cutoff, { batch: 8 })).toBe(12);
    } finally {
      await opened.dispose();
    }
  });

  it('deletes only a prefix of the log: a change older than the cutoff after a younger one waits for it', async () => {
    const opened = await openTestStorage(dialect);
    try {
      const { storage } = opened;
      await write(storage, [...assets(TENANT_A, 'young', 2), riskRecord('risk-1', { primaryAssetId: 'sirn:young-0' })]);
      const imported = await kept(storage, TENANT_A);
      // A write whose clock is years behind (a command's `at`): committed after the import, timed long before it.
      expect(await storage.setRiskLifecycle(TENANT_A, 'risk-1', 'DISMISSED_ACCEPTED', '2000-01-01T00:00:00.000Z')).toBe(
        true,
      );
      const all = await kept(storage, TENANT_A);
      expect(all.length).toBe(imported.length + 1);
      expect(all[all.length - 1]!.at).toBe('2000-01-01T00:00:00.000Z');

      // The import's changes are at the cutoff: none is deleted, nor the old one after them.
      expect(await storage.pruneChanges(imported[0]!.at)).toBe(0);
      expect(await kept(storage, TENANT_A, 0)).toEqual(all);
      // A cutoff after the import: the import's changes and the old one after them.
      const later = new Date(Date.parse(imported[imported.length - 1]!.at) + 1).toISOString();
      expect(await storage.pruneChanges(later)).toBe(all.length);
      expect(await kept(storage, TENANT_A, Number(all[all.length - 1]!.seq))).toEqual([]);
    } finally {
      await opened.dispose();
    }
  });

  // Two servers of one PostgreSQL database (SQLite has one writer at a time, its write lock taken by each batch).
  it.runIf(dialect === 'postgres')('two connections pruning at once delete each change once', async () => {
    const opened = await openTestStorage(dialect);
    const other = await openStorage(opened.url);
    try {
      const { cutoff, oldA, youngA } = await oldAndYoung(opened.storage);
      const [a, b] = await Promise.all([
        opened.storage.pruneChanges(cutoff, { batch: 3 }),
        other.pruneChanges(cutoff, { batch: 3 }),
      ]);
      expect(a + b).toBe(oldA.length);
      expect(seqs(await kept(opened.storage, TENANT_A, oldA[oldA.length - 1]))).toEqual(youngA);
      expect(await changes(opened.storage, TENANT_A, oldA[oldA.length - 2])).toBe('gone');
    } finally {
      await other.close();
      await opened.dispose();
    }
  });

  // A server stopped (SIGSTOP, a paused machine) in the middle of a batch holds its tenant until it goes on: the others'
  // runners, which apply scans too, must not stand still behind it.
  it.runIf(dialect === 'postgres')('a prune beside another holding the tenant leaves it and goes on', async () => {
    const opened = await openTestStorage(dialect);
    const { db: raw } = await connect(opened.url);
    try {
      const { storage } = opened;
      // A third tenant, written first: its 4 changes are older than the cutoff too.
      await write(storage, assets(TENANT_C, 'c', 4));
      const { cutoff, oldA, youngA } = await oldAndYoung(storage);
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      let held!: () => void;
      const holding = new Promise<void>((resolve) => (held = resolve));
      const frozen = raw.transaction().execute(async (tx) => {
        await sql`select pg_advisory_xact_lock(${CHANGES_PRUNE_CLASS}::int, hashtext(${TENANT_A}))`.execute(tx);
        held();
        await released;
      });
      await holding;
      // Tenant A is left to the one holding it; the third tenant's 4 are deleted.
      expect(await storage.pruneChanges(cutoff)).toBe(4);
      expect(seqs(await kept(storage, TENANT_A, 0))).toEqual([...oldA, ...youngA]);
      release();
      await frozen;
      expect(await storage.pruneChanges(cutoff)).toBe(oldA.length);
      expect(seqs(await kept(storage, TENANT_A, oldA[oldA.length - 1]))).toEqual(youngA);
    } finally {
      await raw.destroy();
      await opened.dispose();
    }
  });

  // The write holds the tenant's row from its append to its commit; the prune's batches update that row last.
  it.runIf(dialect === 'postgres')('a prune beside a write to the tenant ends, and so does the write', async () => {
    const opened = await openTestStorage(dialect);
    const other = await openStorage(opened.url);
    try {
      const { storage } = opened;
      await write(storage, assets(TENANT_A, 'old', 20));
      const cutoff = new Date(Date.now() + 1).toISOString();
      await new Promise((resolve) => setTimeout(resolve, 5));
      let pruning: Promise<number> | undefined;
      const result = await ingestTexts(
        storage,
        { 'teamdojo.json': TEAMDOJO },
        {
          provider: 'AWS',
          region: 'us-east-1',
          // At the system's time (the write's clock times its changes), after the cutoff.
          now: () => new Date(),
          // Settled: the write's changes are appended and the tenant's row is held until the commit.
          onPhase: (phase) => void (phase === 'settled' && (pruning = other.pruneChanges(cutoff, { batch: 1 }))),
        },
      );
      expect(result.problems).toEqual([]);
      expect(pruning).toBeDefined();
      expect(await pruning).toBe(20);
      // The scan's changes all stayed, right after the pruned part.
      const left = seqs(await kept(storage, TENANT_A, 20));
      expect(left.length).toBeGreaterThan(0);
      expect(left).toEqual(Array.from({ length: left.length }, (_, i) => 21 + i));
    } finally {
      await other.close();
      await opened.dispose();
    }
  });
});
