// Tenant reads: every API read runs in one transaction of its tenant (one snapshot; on PostgreSQL under row-level
// security).
import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/tables.js';
import type { Dialect } from '../types.js';

/** Runs tenant reads so that the database itself also restricts them to the tenant (see tenantReader). */
export type TenantReader = <T>(tenantId: string, work: (db: Kysely<Database>) => Promise<T>) => Promise<T>;

let escapeLiteral: ((text: string) => string) | undefined;

/**
 * Every read runs in one transaction, so that all its statements see one snapshot of the data: a page, its count and
 * its embeds are all from before an import's commit or all from after it, never a mix.
 * PostgreSQL: a read-only REPEATABLE READ transaction (READ COMMITTED would give each statement its own snapshot)
 * with the transaction-local `secinv.tenant_id` that the row-level security policies read, so even a query that lost
 * its tenant predicate sees one tenant. SQLite: a deferred transaction, whose first read fixes the snapshot in WAL
 * mode; it has no row-level security, the predicate added by fromTenant() is the wall there. Tests of the database's
 * own walls ask for `read write`, to see the privileges refuse a write rather than the transaction.
 */
export function tenantReader(
  db: Kysely<Database>,
  dialect: Dialect,
  access: 'read only' | 'read write' = 'read only',
): TenantReader {
  if (dialect === 'sqlite') return (_tenantId, work) => db.transaction().execute(work);
  const begin = `start transaction isolation level repeatable read ${access}`;
  // Asked once per reader, on its first read: whether the database is a Citus coordinator (see beginTenant).
  let citus: Promise<boolean> | undefined;
  return (tenantId, work) =>
    db.connection().execute(async (connection) => {
      try {
        // pg is loaded on PostgreSQL only (src/storage/db/postgres.ts): by the first read it is, and this awaits once.
        escapeLiteral ??= (await import('pg')).default.escapeLiteral;
        // A failed question (a connection lost) is asked again by the next read rather than failing them all.
        citus ??= onCitus(connection).catch((error: unknown) => {
          citus = undefined;
          throw error;
        });
        const setting = `set local secinv.tenant_id = ${escapeLiteral(tenantId)}`;
        for (const message of beginTenant(begin, setting, await citus)) await sql.raw(message).execute(connection);
        const result = await work(connection);
        await sql`commit`.execute(connection);
        return result;
      } catch (error) {
        // Never back to the pool inside a transaction: a failed read (a timeout, a bad statement) is rolled back, and
        // a rollback that cannot be sent means the connection is gone anyway.
        await sql`rollback`.execute(connection).catch(() => undefined);
        throw error;
      }
    });
}

/**
 * The messages that open a tenant's read: the transaction, then the tenant as a `SET LOCAL`, which Citus (with
 * `citus.propagate_set_commands = 'local'`) replays on every worker the transaction reaches, where set_config() was
 * never sent. Two statements in one message need the simple protocol, which takes no parameters: the id is quoted by
 * pg's own escapeLiteral. On plain PostgreSQL both go in one message, one round trip where Kysely's transaction takes
 * two (docs/DESIGN.md §74). Citus replays the text of the whole message that held the SET, so there the transaction
 * is begun on its own and the workers get the setting, and the isolation level that Citus otherwise leaves at READ
 * COMMITTED on them, without a second BEGIN (docs/DESIGN.md §99).
 */
export const beginTenant = (begin: string, setting: string, citus: boolean): string[] =>
  citus ? [begin, `set transaction isolation level repeatable read; ${setting}`] : [`${begin}; ${setting}`];

const onCitus = (db: Kysely<Database>): Promise<boolean> =>
  sql<{ citus: boolean }>`select exists (select from pg_extension where extname = 'citus') as citus`
    .execute(db)
    .then((r) => r.rows[0]?.citus === true);
