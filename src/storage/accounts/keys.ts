// API keys: stored as a SHA-256 hash and a short display prefix, never the key itself.
import type { Kysely } from 'kysely';
import { DEFAULT_SCOPES, scopesText, storedScopes } from '../../domain/scopes.js';
import { unlessLocked } from '../db/journal.js';
import { perTurn } from '../../lib/per-turn.js';
import { compiledOnce } from '../db/compiled.js';
import { writeTransaction } from '../tx/write.js';
import type { Database } from '../db/tables.js';
import type { AuthenticatedKey, Dialect, KeyInfo, Storage } from '../types.js';

type KeyStore = Pick<Storage, 'insertKey' | 'listKeys' | 'revokeKey' | 'findKeyByHash' | 'findKeyById' | 'touchKey'>;

/**
 * Every request looks its key up, and a lookup costs the server more CPU than answering a 304 or a kept body does: a
 * round trip on PostgreSQL, a read transaction of its own on SQLite (docs/DESIGN.md §72, §77). Lookups of one key asked
 * in one turn of the event loop share one, sent once the turn's input has been read (`setImmediate`); those asked while
 * it is on its way share the next, sent when it answers. Each shared lookup is sent after every request it answers was
 * asked, so each sees every write committed before it was asked (a revoked key, a new data version), as a lookup of
 * its own would; nobody joins a lookup already sent.
 */
export function freshShared<T>(lookup: (value: string) => Promise<T>): (value: string) => Promise<T> {
  type Asker = (sent: Promise<T>) => void;
  /** Keys with a lookup sent and not answered yet. */
  const onTheirWay = new Set<string>();
  /** Askers of a key gathered while a lookup of it was on its way: they share the next, sent when it answers. */
  const waiting = new Map<string, Asker[]>();
  const send = (value: string, askers: Asker[]): void => {
    onTheirWay.add(value);
    const sent = lookup(value);
    for (const ask of askers) ask(sent);
    const landed = () => {
      onTheirWay.delete(value);
      const next = waiting.get(value);
      waiting.delete(value);
      if (next !== undefined) send(value, next);
    };
    sent.then(landed, landed);
  };
  const gather = perTurn<Asker>((value, askers) => {
    if (!onTheirWay.has(value)) send(value, askers);
    else waiting.set(value, [...(waiting.get(value) ?? []), ...askers]);
  });
  return (value) => new Promise<T>((resolve) => gather(value, resolve));
}

export function keyStore(db: Kysely<Database>, dialect: Dialect): KeyStore {
  // Every request looks its key up: built and compiled once (docs/DESIGN.md §38).
  const lookup = (by: 'key_hash' | 'id') =>
    compiledOnce((db, value: string) =>
      db
        .selectFrom('api_keys')
        .innerJoin('tenants', 'tenants.tenant_id', 'api_keys.tenant_id')
        .select([
          'api_keys.id',
          'api_keys.tenant_id',
          'tenants.data_version',
          'api_keys.expires_at',
          'api_keys.revoked_at',
          'api_keys.last_used_at',
          'api_keys.scopes',
        ])
        .where(`api_keys.${by}`, '=', value),
    );
  const lookups = { key_hash: lookup('key_hash'), id: lookup('id') };
  const findKey = async (by: 'key_hash' | 'id', value: string): Promise<AuthenticatedKey | undefined> => {
    const [row] = await lookups[by](db, value);
    return (
      row && {
        keyId: row.id,
        tenantId: row.tenant_id,
        dataVersion: Number(row.data_version),
        expiresAt: row.expires_at,
        revokedAt: row.revoked_at,
        lastUsedAt: row.last_used_at,
        scopes: storedScopes(row.scopes),
      }
    );
  };

  return {
    async insertKey(row, onWait) {
      await writeTransaction(
        db,
        dialect,
        (tx) =>
          tx
            .insertInto('api_keys')
            .values({
              id: row.id,
              tenant_id: row.tenantId,
              name: row.name,
              prefix: row.prefix,
              key_hash: row.keyHash,
              created_at: row.createdAt,
              expires_at: row.expiresAt,
              revoked_at: null,
              last_used_at: null,
              scopes: scopesText(row.scopes ?? DEFAULT_SCOPES),
            })
            .execute(),
        onWait,
      );
    },

    async listKeys(tenantId: string): Promise<KeyInfo[]> {
      const rows = await db
        .selectFrom('api_keys')
        .selectAll()
        .where('tenant_id', '=', tenantId)
        .orderBy('created_at')
        .orderBy('id')
        .execute();
      return rows.map((r) => ({
        id: r.id,
        name: r.name,
        prefix: r.prefix,
        createdAt: r.created_at,
        expiresAt: r.expires_at,
        revokedAt: r.revoked_at,
        lastUsedAt: r.last_used_at,
        scopes: storedScopes(r.scopes),
      }));
    },

    /** Revokes a key; false when no key has that id. Revoking twice keeps the first time. */
    revokeKey: (id, at, onWait) =>
      writeTransaction(
        db,
        dialect,
        async (tx) => {
          const key = await tx
            .selectFrom('api_keys')
            .select(['id', 'revoked_at'])
            .where('id', '=', id)
            .executeTakeFirst();
          if (!key) return false;
          if (key.revoked_at === null)
            await tx.updateTable('api_keys').set({ revoked_at: at }).where('id', '=', id).execute();
          return true;
        },
        onWait,
      ),

    /** The key with this hash and its tenant's data version; undefined when no such key or tenant exists. */
    findKeyByHash: freshShared((keyHash: string) => findKey('key_hash', keyHash)),

    /** The key with this id, as findKeyByHash finds it (a download link names the key that asked for it). */
    findKeyById: (id: string) => findKey('id', id),

    async touchKey(id: string, at: string): Promise<boolean> {
      const touch = (db: Kysely<Database>) =>
        db.updateTable('api_keys').set({ last_used_at: at }).where('id', '=', id).execute();
      // PostgreSQL locks rows, and no other write holds a key's row for long.
      if (dialect === 'postgres') return touch(db).then(() => true);
      return unlessLocked(db, touch);
    },
  };
}
