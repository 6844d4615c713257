// Single-statement reads of one tenant asked in one turn share one PostgreSQL transaction; a failure stays its own.
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from '../../../src/storage/db/connect.js';
import { defaultConnectOptions } from '../../../src/storage/db/connection.js';
import { gatheredPerTurn } from '../../../src/storage/tx/gathered-reads.js';
import { openStorage, type Storage } from '../../../src/storage/index.js';
import { fromTenant } from '../../../src/storage/tx/tenant.js';
import { tenantReader, type TenantReader } from '../../../src/storage/tx/read.js';
import type { Database } from '../../../src/storage/db/tables.js';
import { A1, A2, fixture } from '../../fixtures.js';
import { createTestDatabase, importRecords, TENANT_A, TENANT_B, TEST_DIALECTS } from '../../helpers.js';

/** A reader that records each transaction it is asked for: its tenant and the reads that ran in it, in order. */
function recordingReader(begins = true) {
  const transactions: { tenantId: string; ran: string[] }[] = [];
  const read: TenantReader = async (tenantId, work) => {
    if (!begins) throw new Error('connection lost');
    const transaction = { tenantId, ran: [] as string[] };
    transactions.push(transaction);
    return work(transaction as unknown as Kysely<Database>);
  };
  /** A read named `name` that records itself in its transaction, and fails when `fails`. */
  const work =
    (name: string, fails = false) =>
    async (db: Kysely<Database>) => {
      (db as unknown as { ran: string[] }).ran.push(name);
      if (fails) throw new Error(`${name} failed`);
      return name;
    };
  return { transactions, read, work };
}
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('gatheredPerTurn', () => {
  it("shares one transaction among one tenant's reads asked in one turn, begun once the turn is over", async () => {
    const { transactions, read, work } = recordingReader();
    const gathered = gatheredPerTurn(read);
    const answers = [gathered(TENANT_A, work('a')), gathered(TENANT_A, work('b')), gathered(TENANT_A, work('c'))];
    expect(transactions).toHaveLength(0);
    expect(await Promise.all(answers)).toEqual(['a', 'b', 'c']);
    expect(transactions).toEqual([{ tenantId: TENANT_A, ran: ['a', 'b', 'c'] }]);
  });

  it("gives another tenant's reads, and reads asked in a later turn, transactions of their own", async () => {
    const { transactions, read, work } = recordingReader();
    const gathered = gatheredPerTurn(read);
    const first = [gathered(TENANT_A, work('a1')), gathered(TENANT_B, work('b1')), gathered(TENANT_A, work('a2'))];
    await settle();
    const later = gathered(TENANT_A, work('a3'));
    expect(await Promise.all([...first, later])).toEqual(['a1', 'b1', 'a2', 'a3']);
    expect(transactions).toEqual([
      { tenantId: TENANT_A, ran: ['a1', 'a2'] },
      { tenantId: TENANT_B, ran: ['b1'] },
      { tenantId: TENANT_A, ran: ['a3'] },
    ]);
  });

  it('a read that fails fails alone, and those after it run in another transaction', async () => {
    const { transactions, read, work } = recordingReader();
    const gathered = gatheredPerTurn(read);
    const answers = [
      gathered(TENANT_A, work('a')),
      gathered(TENANT_A, work('bad', true)),
      gathered(TENANT_A, work('c')),
      gathered(TENANT_A, work('d')),
    ];
    const settled = await Promise.allSettled(answers);
    expect(settled.map((s) => (s.status === 'fulfilled' ? s.value : (s.reason as Error).message))).toEqual([
      'a',
      'bad failed',
      'c',
      'd',
    ]);
    expect(transactions.map((t) => t.ran)).toEqual([
      ['a', 'bad'],
      ['c', 'd'],
    ]);
  });

  it('when the transaction cannot begin, every read asked fails with its error', async () => {
    const { read, work } = recordingReader(false);
    const gathered = gatheredPerTurn(read);
    const settled = await Promise.allSettled([gathered(TENANT_A, work('a')), gathered(TENANT_A, work('b'))]);
    expect(settled.map((s) => s.status === 'rejected' && (s.reason as Error).message)).toEqual([
      'connection lost',
      'connection lost',
    ]);
  });

  it('when the transaction cannot end, the read answered at its end fails with its error, as a lone read would', async () => {
    const { work } = recordingReader();
    // Runs the reads, then fails as a COMMIT on a lost connection would.
    const read: TenantReader = async (tenantId, run) => {
      await run({ ran: [] } as unknown as Kysely<Database>);
      throw new Error('commit failed');
    };
    const gathered = gatheredPerTurn(read);
    const settled = await Promise.allSettled([gathered(TENANT_A, work('a')), gathered(TENANT_A, work('b'))]);
    expect(settled.map((s) => (s.status === 'fulfilled' ? s.value : (s.reason as Error).message))).toEqual([
      'a',
      'commit failed',
    ]);
    const alone = await Promise.allSettled([gathered(TENANT_A, work('c'))]);
    expect(alone.map((s) => s.status === 'rejected' && (s.reason as Error).message)).toEqual(['commit failed']);
  });
});

describe.skipIf(!TEST_DIALECTS.includes('postgres'))('one asset read on PostgreSQL', () => {
  const statements: string[] = [];
  let storage: Storage;
  let drop: () => Promise<void>;
  let url: string;
  beforeAll(async () => {
    const database = await createTestDatabase('postgres');
    ({ drop, url } = database);
    const admin = await openStorage(database.url);
    expect((await importRecords(admin, fixture)).problems).toEqual([]);
    await admin.close();
    storage = await openStorage(database.url, { role: 'api', onQuery: (text) => void statements.push(text) });
  });
  afterAll(async () => {
    await storage.close();
    await drop();
  });
  const scopeOf = (tenantId: string) => ({ tenantId, dataVersion: 1 });
  const nameOf = (body: Buffer | undefined) =>
    body === undefined ? undefined : (JSON.parse(body.toString()) as { tenantId: string; name: string });

  it('ten reads asked together make one transaction, and each gets its own asset', async () => {
    const alone = [nameOf(await storage.getAsset(scopeOf(TENANT_A), A1, false))];
    alone.push(nameOf(await storage.getAsset(scopeOf(TENANT_A), A2, false)));
    statements.length = 0;
    const ids = Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? A1 : A2));
    const together = await Promise.all(ids.map((id) => storage.getAsset(scopeOf(TENANT_A), id, false)));
    expect(together.map(nameOf)).toEqual(ids.map((id) => alone[id === A1 ? 0 : 1]));
    expect(statements.filter((s) => s.startsWith('start transaction'))).toHaveLength(1);
    expect(statements.filter((s) => s === 'commit')).toHaveLength(1);
    expect(statements.filter((s) => s.includes('from "assets"'))).toHaveLength(10);
  });

  it("reads of two tenants asked together each see their own tenant's asset, never the other's", async () => {
    statements.length = 0;
    const [a, b, missing] = await Promise.all([
      storage.getAsset(scopeOf(TENANT_A), A1, false),
      storage.getAsset(scopeOf(TENANT_B), A1, false),
      storage.getAsset(scopeOf(TENANT_B), A2, false),
    ]);
    expect(nameOf(a)).toMatchObject({ tenantId: TENANT_A, name: 'web-prod-1' });
    expect(nameOf(b)).toMatchObject({ tenantId: TENANT_B, name: 'tenant-b-web' });
    expect(missing).toBeUndefined();
    expect(statements.filter((s) => s.startsWith('start transaction'))).toHaveLength(2);
  });

  it('a statement that fails in the shared transaction fails alone; the reads after it are answered', async () => {
    const single = await connect(url, { ...defaultConnectOptions, role: 'api', poolMax: 1 });
    try {
      const gathered = gatheredPerTurn(tenantReader(single.db, single.dialect));
      const ids = (db: Kysely<Database>) =>
        fromTenant(db, 'assets', TENANT_B)
          .select('id')
          .orderBy('id')
          .execute()
          .then((rows) => rows.map((r) => r.id));
      const settled = await Promise.allSettled([
        gathered(TENANT_B, ids),
        gathered(TENANT_B, (db) => sql`select * from no_such_table`.execute(db)),
        gathered(TENANT_B, ids),
      ]);
      expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      expect((settled[1] as PromiseRejectedResult).reason).toMatchObject({ message: /no_such_table/ });
      expect((settled[2] as PromiseFulfilledResult<string[]>).value).toEqual(
        (settled[0] as PromiseFulfilledResult<string[]>).value,
      );
      expect((settled[0] as PromiseFulfilledResult<string[]>).value).toHaveLength(2);
    } finally {
      await single.db.destroy();
    }
  });
});
