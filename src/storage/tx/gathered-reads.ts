// Single-statement reads of one tenant asked in one turn of the event loop share one PostgreSQL transaction.
import type { Kysely } from 'kysely';
import { perTurn } from '../../lib/per-turn.js';
import type { Database } from '../db/tables.js';
import type { Dialect } from '../types.js';
import { tenantReader, type TenantReader } from './read.js';

interface Asked {
  work: (db: Kysely<Database>) => Promise<unknown>;
  answer: (value: unknown) => void;
  fail: (error: unknown) => void;
}

/**
 * On PostgreSQL a read of one statement is three round trips (BEGIN with the tenant's setting, the statement, COMMIT),
 * and each costs the server more CPU than the statement does (docs/DESIGN.md §78). Reads of one tenant asked in one
 * turn (gathered by `perTurn`, as the key lookups of §77 are) run one after the other in one transaction of `read`:
 * its snapshot is taken by its first statement, after every one of them was asked, so each sees every write committed
 * before it asked. Another tenant's reads are another transaction, with that tenant's setting. Each read is answered
 * when its statement returns, the last once the transaction has ended. A read that fails aborts the transaction: it
 * fails alone, and those after it run in a transaction of their own. When the transaction itself cannot begin or end
 * (the connection is gone), the reads it has not answered fail with its error.
 */
export function gatheredPerTurn(read: TenantReader): TenantReader {
  const run = (tenantId: string, asked: Asked[]): void => {
    /** The first read not run yet. */
    let next = 0;
    // The last read of the transaction is answered once it has ended, as a read of its own would be.
    let last: (() => void) | undefined;
    void read(tenantId, async (db) => {
      while (next < asked.length) {
        const one = asked[next]!;
        next += 1;
        try {
          const value = await one.work(db);
          if (next < asked.length) one.answer(value);
          else last = () => one.answer(value);
        } catch (error) {
          one.fail(error);
          return;
        }
      }
    })
      .catch((error: unknown) => {
        // The last read ran but its transaction did not end well: it fails, as a read of its own would.
        const unanswered = last === undefined ? next : asked.length - 1;
        last = undefined;
        for (const one of asked.slice(unanswered)) one.fail(error);
        next = asked.length;
      })
      .finally(() => {
        last?.();
        if (next < asked.length) run(tenantId, asked.slice(next));
      });
  };
  const gather = perTurn(run);
  return <T>(tenantId: string, work: (db: Kysely<Database>) => Promise<T>) =>
    new Promise<T>((answer, fail) => gather(tenantId, { work, answer: answer as (value: unknown) => void, fail }));
}

/**
 * A tenant reader for work that runs a single statement (one asset, by key). On SQLite a statement reads one snapshot by
 * itself, so it runs without BEGIN and COMMIT, two statements and a transaction object fewer (docs/DESIGN.md §38); on
 * PostgreSQL it is tenantReader's transaction, whose setting the row-level security policies read, shared by the reads
 * of one tenant asked in one turn (src/storage/tx/gathered-reads.ts, §78).
 */
export function singleStatementReader(db: Kysely<Database>, dialect: Dialect): TenantReader {
  if (dialect === 'sqlite') return (_tenantId, work) => work(db);
  return gatheredPerTurn(tenantReader(db, dialect));
}
