import { describe, expect, it } from 'vitest';
import { retried } from '../../src/lib/retry.js';

describe('retried', () => {
  it('tries again after each failure, its waits doubling up to the most, and resolves with the value', async () => {
    let tries = 0;
    const waits: number[] = [];
    const value = await retried(
      async () => {
        tries += 1;
        if (tries < 5) throw new Error(`failure ${tries}`);
        return 'opened';
      },
      { signal: new AbortController().signal, firstMs: 2, maxMs: 10, onError: (_e, waitMs) => void waits.push(waitMs) },
    );
    expect(value).toBe('opened');
    expect(waits).toEqual([2, 4, 8, 10]);
  });

  it('once aborted, ends its wait and tries no more: undefined', async () => {
    const stop = new AbortController();
    let tries = 0;
    const ended = retried(
      async () => {
        tries += 1;
        throw new Error('down');
      },
      { signal: stop.signal, firstMs: 60_000, onError: () => stop.abort() },
    );
    expect(await ended).toBeUndefined();
    expect(tries).toBe(1);
  });
});
