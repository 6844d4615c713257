// Key lookups asked together share one statement, and none of them answers from a lookup sent before it was asked.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newKey } from '../../../src/domain/keys.js';
import { openStorage, type Storage } from '../../../src/storage/index.js';
import { freshShared } from '../../../src/storage/accounts/keys.js';
import { createTestDatabase, importRecords, TENANT_A, TEST_DIALECTS } from '../../helpers.js';
import { fixture } from '../../fixtures.js';

/** A lookup whose answers the test gives by hand, in the order it was sent. */
function handLookup() {
  const sent: { value: string; answer: (v: string) => void; fail: (e: Error) => void }[] = [];
  const lookup = (value: string) =>
    new Promise<string>((answer, fail) => {
      sent.push({ value, answer, fail });
    });
  return { sent, lookup };
}
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('freshShared', () => {
  it('shares one lookup among those asked in one turn, sent once the turn is over', async () => {
    const { sent, lookup } = handLookup();
    const find = freshShared(lookup);
    const asked = [find('k'), find('k'), find('k')];
    // Not sent while the turn may still read other requests.
    expect(sent).toHaveLength(0);
    await settle();
    expect(sent).toHaveLength(1);
    sent[0]!.answer('shared');
    expect(await Promise.all(asked)).toEqual(['shared', 'shared', 'shared']);
  });

  it('those asked while a lookup is on its way share the next, sent after it lands', async () => {
    const { sent, lookup } = handLookup();
    const find = freshShared(lookup);
    const first = find('k');
    await settle();
    expect(sent).toHaveLength(1);
    const waiting = [find('k'), find('k'), find('k')];
    await settle();
    // Not joined to the one on its way (it was sent before they were asked), and not sent yet either.
    expect(sent).toHaveLength(1);
    sent[0]!.answer('before');
    expect(await first).toBe('before');
    // The next is sent at the end of the turn after the one it landed in.
    await settle();
    await settle();
    expect(sent).toHaveLength(2);
    sent[1]!.answer('after');
    expect(await Promise.all(waiting)).toEqual(['after', 'after', 'after']);
    // Nothing on its way any more: the next is sent at the end of its turn again.
    const again = find('k');
    await settle();
    expect(sent).toHaveLength(3);
    sent[2]!.answer('later');
    expect(await again).toBe('later');
  });

  it('shares nothing between different values', async () => {
    const { sent, lookup } = handLookup();
    const find = freshShared(lookup);
    const a = find('a');
    const b = find('b');
    await settle();
    expect(sent.map((s) => s.value)).toEqual(['a', 'b']);
    sent[0]!.answer('A');
    sent[1]!.answer('B');
    expect([await a, await b]).toEqual(['A', 'B']);
  });

  it('a failed lookup fails only those who shared it; those waiting get the next one', async () => {
    const { sent, lookup } = handLookup();
    const find = freshShared(lookup);
    const first = [find('k'), find('k')];
    await settle();
    const waiting = find('k');
    sent[0]!.fail(new Error('connection lost'));
    for (const asked of first) await expect(asked).rejects.toThrow('connection lost');
    await settle();
    await settle();
    expect(sent).toHaveLength(2);
    sent[1]!.answer('fresh');
    expect(await waiting).toBe('fresh');
  });
});

for (const dialect of TEST_DIALECTS) {
  describe(`key lookups on ${dialect}`, () => {
    const statements: string[] = [];
    let storage: Storage;
    let drop: () => Promise<void>;
    const key = newKey();
    beforeAll(async () => {
      const database = await createTestDatabase(dialect);
      drop = database.drop;
      storage = await openStorage(database.url, { onQuery: (sql) => void statements.push(sql) });
      expect((await importRecords(storage, fixture)).problems).toEqual([]);
      await storage.insertKey({
        id: key.id,
        tenantId: TENANT_A,
        name: 'n',
        prefix: key.prefix,
        keyHash: key.keyHash,
        createdAt: '2026-01-01T00:00:00.000Z',
        expiresAt: null,
      });
    });
    afterAll(async () => {
      await storage.close();
      await drop();
    });
    const lookups = () => statements.filter((s) => s.includes('"api_keys"."key_hash" ='));

    it('twenty lookups of one key asked in one turn make one statement and give one answer', async () => {
      statements.length = 0;
      const found = await Promise.all(Array.from({ length: 20 }, () => storage.findKeyByHash(key.keyHash)));
      expect(lookups()).toHaveLength(1);
      expect(new Set(found.map((f) => JSON.stringify(f))).size).toBe(1);
      expect(found[0]).toMatchObject({ keyId: key.id, tenantId: TENANT_A, revokedAt: null });
    });
  });
}
