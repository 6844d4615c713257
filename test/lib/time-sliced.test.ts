import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { timeSliced } from '../../src/lib/time-sliced.js';

/** Counts turns of the event loop (one check phase each) until stopped. */
const turns = () => {
  let count = 0;
  let on = true;
  const tick = () => {
    count += 1;
    if (on) setImmediate(tick);
  };
  setImmediate(tick);
  return {
    now: () => count,
    stop: () => {
      on = false;
    },
  };
};

/** Holds the loop for `ms`. */
const hold = (ms: number) => {
  const until = performance.now() + ms;
  while (performance.now() < until);
};

/** Gives `count` pieces to the gate at once, each holding the loop `ms`; resolves with the turn each started in. */
const startAll = (gate: (start: () => void) => void, count: number, ms: number) => {
  const clock = turns();
  const started: { piece: number; turn: number }[] = [];
  return new Promise<typeof started>((done) => {
    for (let piece = 0; piece < count; piece += 1)
      gate(() => {
        started.push({ piece, turn: clock.now() });
        hold(ms);
        if (started.length === count) {
          clock.stop();
          done(started);
        }
      });
  });
};

describe('timeSliced', () => {
  it('starts pieces that hold the loop longer than the slice in the order given, one per turn', async () => {
    const started = await startAll(timeSliced(2), 5, 3);
    expect(started.map((s) => s.piece)).toEqual([0, 1, 2, 3, 4]);
    for (let i = 1; i < started.length; i += 1) expect(started[i]!.turn).toBeGreaterThan(started[i - 1]!.turn);
  });

  it('starts short pieces together, as many in a turn as fit in the slice', async () => {
    const started = await startAll(timeSliced(50), 20, 0.1);
    expect(started.map((s) => s.piece)).toEqual([...Array(20).keys()]);
    expect(new Set(started.map((s) => s.turn)).size).toBe(1);
  });

  it('counts what a piece does before its first wait for I/O (its microtasks) in the slice', async () => {
    const gate = timeSliced(2);
    const clock = turns();
    const started: number[] = [];
    await new Promise<void>((done) => {
      for (let piece = 0; piece < 3; piece += 1)
        gate(() => {
          started.push(clock.now());
          void Promise.resolve().then(() => {
            hold(3);
            if (piece === 2) done();
          });
        });
    });
    clock.stop();
    expect(new Set(started).size).toBe(3);
  });

  it('polls for I/O between two slices: a request sent while pieces wait is read before the last starts', async () => {
    const gate = timeSliced(2);
    const events: string[] = [];
    const server = createServer((_req, res) => {
      events.push('request read');
      res.end();
    });
    await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
    const { port } = server.address() as AddressInfo;
    // The first piece sends a request over loopback; each piece holds the loop a while. Connecting, accepting and
    // reading take the server several turns of the loop: a gate that started every piece at once would read it last.
    let answered: Promise<void> = Promise.resolve();
    const finished = new Promise<void>((done) => {
      for (let piece = 0; piece < 50; piece += 1)
        gate(() => {
          if (piece === 0)
            answered = new Promise<void>((received) =>
              request({ port, host: '127.0.0.1' }, (res) => res.resume().on('end', received)).end(),
            );
          hold(2);
          events.push(`piece ${piece}`);
          if (piece === 49) done();
        });
    });
    await finished;
    await answered;
    server.close();
    expect(events.indexOf('request read')).toBeGreaterThan(-1);
    expect(events.indexOf('request read')).toBeLessThan(events.indexOf('piece 49'));
  });
});
