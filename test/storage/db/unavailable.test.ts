// What the command line says when the database refuses a write for the moment: the API answers its own 503 body, a
// command names the cause and what to do.
import { describe, expect, it } from 'vitest';
import { isUnavailable, unavailableMessage } from '../../../src/storage/index.js';

describe('an unavailable database, as a command says it', () => {
  it('names a write beside another, a conflict to run again, and anything else as unavailable', () => {
    const cases = [
      { code: 'SQLITE_BUSY', message: 'database is locked' },
      { code: '40P01', message: 'deadlock detected' },
      { code: '40001', message: 'could not serialize access due to concurrent update' },
      { code: 'ECONNREFUSED', message: 'connect ECONNREFUSED 127.0.0.1:5432' },
    ];
    expect(cases.map((e) => [isUnavailable(e), unavailableMessage(e)])).toEqual([
      [true, 'the database is busy: another process is writing it (retry when that write ends)'],
      [true, 'this write conflicted with another that ran at the same time, and nothing was written: run it again'],
      [true, 'this write conflicted with another that ran at the same time, and nothing was written: run it again'],
      [true, 'the database is unavailable'],
    ]);
  });
});
