// The tenant setting of a read on PostgreSQL: a SET LOCAL in the transaction's first message, gone with the
// transaction; and the messages a Citus coordinator gets, of which it replays on its workers only the one with the SET.
import pg from 'pg';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from '../../../src/storage/db/connect.js';
import { defaultConnectOptions } from '../../../src/storage/db/connection.js';
import { beginTenant, tenantReader } from '../../../src/storage/tx/read.js';
import { fixture } from '../../fixtures.js';
import { createTestDatabase, importRecords, TENANT_A, TENANT_B, TEST_DIALECTS } from '../../helpers.js';
import { openStorage } from '../../../src/storage/index.js';

describe.skipIf(!TEST_DIALECTS.includes('postgres'))('tenant reads on PostgreSQL', () => {
  let url: string;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    ({ url, drop } = await createTestDatabase('postgres'));
    const admin = await openStorage(url);
    expect((await importRecords(admin, fixture)).problems).toEqual([]);
    await admin.close();
  });
  afterAll(async () => drop());

  /** One pooled connection as the API role, and the text of every statement sent on it. */
  async function single() {
    const statements: string[] = [];
    const opened = await connect(url, {
      ...defaultConnectOptions,
      role: 'api',
      poolMax: 1,
      onQuery: (text) => void statements.push(text),
    });
    return { ...opened, statements };
  }

  const tenantNow = (db: Parameters<Parameters<ReturnType<typeof tenantReader>>[1]>[0]) =>
    sql<{ v: string | null }>`select current_setting('secinv.tenant_id', true) as v`
      .execute(db)
      .then((r) => r.rows[0]!.v ?? '');

  it('sets the tenant with SET LOCAL in the message that begins the transaction, one round trip', async () => {
    const { db, dialect, statements } = await single();
    try {
      const read = tenantReader(db, dialect);
      expect(await read(TENANT_B, tenantNow)).toBe(TENANT_B);
      const begins = statements.filter((s) => s.startsWith('start transaction'));
      expect(begins).toEqual([
        `start transaction isolation level repeatable read read only; set local secinv.tenant_id = '${TENANT_B}'`,
      ]);
      expect(statements.some((s) => s.includes('set_config'))).toBe(false);
      // The question asked once per reader, then nothing but the reads' own messages.
      statements.length = 0;
      await read(TENANT_A, tenantNow);
      expect(statements).toEqual([begins[0]!.replace(TENANT_B, TENANT_A), statements[1], 'commit']);
    } finally {
      await db.destroy();
    }
  });

  it('leaves no tenant on the pooled connection after a commit or a rollback', async () => {
    const { db, dialect } = await single();
    try {
      const read = tenantReader(db, dialect);
      const outside = () => tenantNow(db);
      expect(await read(TENANT_A, tenantNow)).toBe(TENANT_A);
      expect(await outside()).toBe('');
      await expect(
        read(TENANT_B, async (tx) => {
          expect(await tenantNow(tx)).toBe(TENANT_B);
          await sql`select 1 / 0`.execute(tx);
        }),
      ).rejects.toThrow(/division by zero/);
      expect(await outside()).toBe('');
      // A session-level setting would survive both: the next read sees only its own tenant.
      expect(await read(TENANT_A, tenantNow)).toBe(TENANT_A);
      expect(await outside()).toBe('');
    } finally {
      await db.destroy();
    }
  });

  /**
   * What a worker runs when Citus opens its transaction there: Citus's own BEGIN, then the text of every coordinator
   * message that held a propagated SET LOCAL (Citus's remote_transaction.c), as here.
   */
  async function asWorker(replayed: string) {
    const client = new pg.Client({ connectionString: url });
    const notices: string[] = [];
    client.on('notice', (notice) => notices.push(notice.message ?? ''));
    await client.connect();
    try {
      await client.query(`BEGIN TRANSACTION ISOLATION LEVEL READ COMMITTED;${replayed};SELECT 1`);
      const { rows } = await client.query<{ tenant: string; isolation: string }>(
        `select current_setting('secinv.tenant_id') as tenant, current_setting('transaction_isolation') as isolation`,
      );
      await client.query('rollback');
      return { notices, ...rows[0]! };
    } finally {
      await client.end();
    }
  }

  it('on Citus, replays on a worker the tenant and the isolation level without a second BEGIN', async () => {
    const begin = 'start transaction isolation level repeatable read read only';
    const setting = `set local secinv.tenant_id = ${pg.escapeLiteral("o'brien")}`;
    const messages = beginTenant(begin, setting, true);
    expect(messages).toHaveLength(2);
    expect(messages[1]).not.toMatch(/\b(begin|start transaction)\b/i);
    expect(await asWorker(messages[1]!)).toEqual({ notices: [], tenant: "o'brien", isolation: 'repeatable read' });
    // The one message of plain PostgreSQL, replayed whole, is what drew the worker's warning.
    const [one] = beginTenant(begin, setting, false);
    expect((await asWorker(one!)).notices).toEqual(['there is already a transaction in progress']);
  });

  it('the two messages of Citus make the same transaction on plain PostgreSQL', async () => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      for (const message of beginTenant(
        'start transaction isolation level repeatable read read only',
        `set local secinv.tenant_id = 'x'`,
        true,
      ))
        await client.query(message);
      const { rows } = await client.query<{ tenant: string; isolation: string; ro: string }>(
        `select current_setting('secinv.tenant_id') as tenant, current_setting('transaction_isolation') as isolation,
          current_setting('transaction_read_only') as ro`,
      );
      expect(rows[0]).toEqual({ tenant: 'x', isolation: 'repeatable read', ro: 'on' });
      await client.query('commit');
      const after = await client.query<{ v: string | null }>(`select current_setting('secinv.tenant_id', true) as v`);
      expect(after.rows[0]!.v ?? '').toBe('');
    } finally {
      await client.end();
    }
  });
});
