// Turns: how writes wait for one another on PostgreSQL (advisory locks held to the transaction's end). SQLite has one
// writer at a time: its turn is the write lock (src/storage/db/journal.ts).
import { sql, type RawBuilder, type Transaction } from 'kysely';
import type { Database } from '../db/tables.js';
import type { Dialect, WaitReason } from '../types.js';

/** The advisory lock by which bulk writes take turns with feed loads on PostgreSQL: a fixed key of this application's. */
export const FEED_LOCK = 0x5ec1feed;
/** The class of the advisory locks by which writes to one tenant take turns (the second key: a hash of its id). */
export const TENANT_LOCK_CLASS = 0x5ec1a5e7;
/** The class of the advisory locks by which servers pruning one tenant's change log take turns (second key as above). */
export const CHANGES_PRUNE_CLASS = 0x5ec1c4a9;

/**
 * On PostgreSQL, waits for any other bulk write to the tenant to commit and holds the tenant until this transaction
 * ends: an import, an ingest or a derivation reads a tenant's assets, findings and risks and writes what it made of
 * them, so two at once would each work from a state without the other's writes (two ingests of a new image: both
 * insert it, one fails on the key; a derivation beside an ingest: risks from findings the ingest was replacing). A
 * risk's state takes it too: a derivation writes back each risk's state as it read it. Called before the first read of
 * the tenant's data. SQLite has one writer at a time.
 */
export async function takeTenantTurn(
  tx: Transaction<Database>,
  dialect: Dialect,
  tenantId: string,
  onWait?: (reason: WaitReason) => void,
): Promise<void> {
  if (dialect === 'postgres')
    await takeTurn(tx, 'exclusive', sql`${TENANT_LOCK_CLASS}::int, hashtext(${tenantId})`, () => onWait?.('tenant'));
}

/** The advisory lock functions' name suffix for the mode. */
const lockSuffix = (mode: 'shared' | 'exclusive') => sql.raw(mode === 'shared' ? '_shared' : '');

/** Takes a PostgreSQL advisory lock held to the transaction's end if it is free; whether it did (never waits). */
export async function tryTurn(
  tx: Transaction<Database>,
  mode: 'shared' | 'exclusive',
  key: RawBuilder<unknown>,
): Promise<boolean> {
  const suffix = lockSuffix(mode);
  const { rows } = await sql<{ ok: boolean }>`select pg_try_advisory_xact_lock${suffix}(${key}) as ok`.execute(tx);
  return rows[0]?.ok === true;
}

/**
 * Takes a PostgreSQL advisory lock held to the transaction's end: at once if it is free, else after calling `onWait`
 * (so that a command standing still says why) and waiting for it.
 */
export async function takeTurn(
  tx: Transaction<Database>,
  mode: 'shared' | 'exclusive',
  key: RawBuilder<unknown>,
  onWait: () => void,
): Promise<void> {
  if (await tryTurn(tx, mode, key)) return;
  onWait();
  await sql`select pg_advisory_xact_lock${lockSuffix(mode)}(${key})`.execute(tx);
}
