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
  // BEGIN and the tenant's setting in one round trip, where Kysely's transaction would take two: each costs the
  // server tens of microseconds of CPU, a fourth of a one-asset read (docs/DESIGN.md §74). Two statements in one
  // message need the simple protocol, which takes no parameters: the id is quoted by pg's own escapeLiteral.
  const begin = (tenantId: string, quote: (text: string) => string) =>
    sql.raw(
      `start transaction isolation level repeatable read ${access}; ` +
        `select set_config('secinv.tenant_id', ${quote(tenantId)}, true)`,
    );
  return (tenantId, work) =>
    db.connection().execute(async (connection) => {
      try {
        // pg is loaded on PostgreSQL only (src/storage/db/postgres.ts): by the first read it is, and this awaits once.
        escapeLiteral ??= (await import('pg')).default.escapeLiteral;
        await begin(tenantId, escapeLiteral).execute(connection);
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
