// The small writes of the command line (`tenants create`, `keys create|revoke`, `risks dismiss|reopen`) beside another
// process's write to the SQLite file: each waits for its commit and says so once, as the bulk writes do, instead of
// failing after SQLite's busy timeout, then writes.
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { derivedRiskId } from '../../src/domain/risk-engine.js';
import { openStorage } from '../../src/storage/index.js';
import { A1, fixture } from '../fixtures.js';
import { createKey, createTestDatabase, importRecords, TENANT_A, TEST_DIALECT } from '../helpers.js';
import { otherWrite, waitingCommand, WAITING } from './other-write.js';

const RISK = derivedRiskId(TENANT_A, 'secinv.exposed-kev-vulnerability', A1);

describe.runIf(TEST_DIALECT === 'sqlite')('small writes beside another write (SQLite)', () => {
  let db: string;
  let drop: () => Promise<void>;
  let keyId: string;

  beforeAll(async () => {
    ({ url: db, drop } = await createTestDatabase());
    const storage = await openStorage(db);
    try {
      expect((await importRecords(storage, fixture)).problems).toEqual([]);
      await storage.deriveRisks(TENANT_A, '2026-11-20T10:00:00.000Z');
      await createKey(storage, TENANT_A);
      keyId = (await storage.listKeys(TENANT_A))[0]?.id ?? '';
    } finally {
      await storage.close();
    }
  });
  afterAll(async () => drop());

  /** Runs the command beside the other write; what the file holds by `look` while it waits, and once it has run. */
  async function beside<T>(args: string[], look: (file: Database.Database) => T) {
    const other = otherWrite(db, TENANT_A, 'wal');
    let during: T;
    let command: Awaited<ReturnType<typeof waitingCommand>>;
    try {
      command = await waitingCommand([...args, '--db', db]);
      during = look(other);
      other.exec('commit');
    } finally {
      other.close();
    }
    const code = await command.closed;
    const file = new Database(db.replace(/^sqlite:/, ''), { readonly: true });
    try {
      return { code, waits: command.stderr().split(WAITING).length - 1, during, after: look(file) };
    } finally {
      file.close();
    }
  }

  it('tenants create waits, then creates the tenant', async () => {
    const count = (file: Database.Database) => file.prepare('select count(*) as n from tenants').get();
    expect(await beside(['tenants', 'create', '--name', 'late'], count)).toEqual({
      code: 0,
      waits: 1,
      during: { n: 2 },
      after: { n: 3 },
    });
  });

  it('keys create and keys revoke wait, then write', async () => {
    const keys = (file: Database.Database) =>
      file.prepare('select count(*) as n, count(revoked_at) as revoked from api_keys').get();
    expect(await beside(['keys', 'create', '--tenant', TENANT_A], keys)).toEqual({
      code: 0,
      waits: 1,
      during: { n: 1, revoked: 0 },
      after: { n: 2, revoked: 0 },
    });
    expect(await beside(['keys', 'revoke', keyId], keys)).toEqual({
      code: 0,
      waits: 1,
      during: { n: 2, revoked: 0 },
      after: { n: 2, revoked: 1 },
    });
  });

  it('risks dismiss waits, then sets the state', async () => {
    const state = (file: Database.Database) =>
      file.prepare('select lifecycle_state as state from risks where id = ?').get(RISK);
    expect(await beside(['risks', 'dismiss', RISK, '--tenant', TENANT_A, '--as', 'accepted'], state)).toEqual({
      code: 0,
      waits: 1,
      during: { state: 'OPEN' },
      after: { state: 'DISMISSED_ACCEPTED' },
    });
  });
});
