// Single-statement reads of one tenant asked in one turn of the event loop share one PostgreSQL transaction.
import type { Kysely } from 'kysely';
import type { TenantReader } from './scope.js';
import type { Database } from './tables.js';

interface Asked {
  work: (db: Kysely<Database>) => Promise<unknown>;
  answer: (value: unknown) => void;
  fail: (error: unknown) => void;
}

/**
 * On PostgreSQL a read of one statement is three round trips (BEGIN with the tenant's setting, the statement, COMMIT),
 * and each costs the server more CPU than the statement does (docs/DESIGN.md §78). Reads of one tenant asked in one
 * turn (`setImmediate`, as the key lookups of §77) run one after the other in one transaction of `read`: its snapshot
 * is taken by its first statement, after every one of them was asked, so each sees every write committed before it
 * asked. Another tenant's reads are another transaction, with that tenant's setting. Each read is answered when its
 * statement returns, the last once the transaction has ended. A read that fails aborts the transaction: it fails
 * alone, and those after it run in a transaction of their own. When the transaction itself cannot begin or end (the
 * connection is gone), the reads it has not run fail with its error.
 */
export function gatheredPerTurn(read: TenantReader): TenantReader {
  const gathering = new Map<string, Asked[]>();
  const run = (tenantId: string, asked: Asked[]): void => {
    let left = asked;
    // The last read of the transaction is answered once it has ended, as a read of its own would be.
    let last: (() => void) | undefined;
    read(tenantId, async (db) => {
      while (left.length > 0) {
        const [next, ...rest] = left as [Asked, ...Asked[]];
        left = rest;
        try {
          const value = await next.work(db);
          if (rest.length > 0) next.answer(value);
          else last = () => next.answer(value);
        } catch (error) {
          next.fail(error);
          return;
        }
      }
    })
      .catch((error: unknown) => {
        for (const asked of left) asked.fail(error);
        left = [];
      })
      .finally(() => {
        last?.();
        if (left.length > 0) run(tenantId, left);
      })
      .catch(() => undefined);
  };

  return <T>(tenantId: string, work: (db: Kysely<Database>) => Promise<T>) =>
    new Promise<T>((answer, fail) => {
      let asked = gathering.get(tenantId);
      if (asked === undefined) {
        const group: Asked[] = [];
        asked = group;
        gathering.set(tenantId, group);
        setImmediate(() => {
          gathering.delete(tenantId);
          run(tenantId, group);
        });
      }
      asked.push({ work, answer: answer as (value: unknown) => void, fail });
    });
}
