// The body of an export: read a batch at a time, as fast as its reader takes it and no faster.
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { describe, expect, it } from 'vitest';
import { batchesOf, EXPORT_BATCH, exportBody, type BatchReader } from '../../src/http/export.js';

const BATCHES = 20;
/** Batches of ~250 KB (larger than the stream's byte budget), counting how many were read. */
function source() {
  const state = { reads: 0, returned: false };
  async function* batches(): AsyncGenerator<Buffer[]> {
    try {
      for (let i = 0; i < BATCHES; i += 1) {
        state.reads += 1;
        yield Array.from({ length: 50 }, (_, j) => Buffer.from(JSON.stringify({ i, j, pad: 'x'.repeat(5000) })));
      }
    } finally {
      state.returned = true;
    }
  }
  return { state, iterator: batches() };
}

const turns = async (n: number) => {
  for (let i = 0; i < n; i += 1) await new Promise((resolve) => setImmediate(resolve));
};

describe('export body', () => {
  it('reads the next batch only when the reader has taken the previous one', async () => {
    const { state, iterator } = source();
    const first = await iterator.next();
    const body = exportBody('ndjson', [], first, iterator);
    // A reader that takes one chunk and then stalls (a slow client whose socket buffer is full).
    const held: (() => void)[] = [];
    let written = 0;
    const slow = new Writable({
      highWaterMark: 1024,
      write(chunk: Buffer, _encoding, done) {
        written += chunk.length;
        held.push(done);
      },
    });
    const finished = pipeline(body, slow);
    await turns(50);
    // The first batch went to the reader; at most one more is waiting in the stream.
    expect(held).toHaveLength(1);
    expect(state.reads).toBeLessThanOrEqual(3);
    // The reader catches up: every batch is read and sent, in order, once.
    const release = () => {
      while (held.length > 0) held.shift()!();
    };
    while (!state.returned || held.length > 0) {
      release();
      await turns(2);
    }
    await finished;
    expect(state.reads).toBe(BATCHES);
    let expected = 0;
    for (let i = 0; i < BATCHES; i += 1)
      for (let j = 0; j < 50; j += 1) expected += JSON.stringify({ i, j, pad: 'x'.repeat(5000) }).length + 1;
    expect(written).toBe(expected);
  });

  it('stops reading when the response is destroyed', async () => {
    const { state, iterator } = source();
    const body = exportBody('ndjson', [], await iterator.next(), iterator);
    body.read(0);
    await turns(5);
    body.destroy();
    await turns(5);
    expect(state.returned).toBe(true);
    expect(state.reads).toBeLessThan(BATCHES);
  });

  it('CSV: one header row with a byte order mark, also when nothing matches', async () => {
    async function* none(): AsyncGenerator<Buffer[]> {}
    const empty = none();
    const chunks: Buffer[] = [];
    for await (const chunk of exportBody('csv', ['id', 'score'], { done: false, value: [] }, empty))
      chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks).toString('utf8')).toBe('\uFEFFid,score\r\n');
  });

  it('batchesOf reads at most one batch ahead of what the response took, one read at a time', async () => {
    const state = { reads: 0, running: 0, mostRunning: 0 };
    const pad = 'x'.repeat(300);
    // A list of BATCHES batches (the first of 100): each read counted, and answered a few turns later.
    const read: BatchReader<number> = async (after, size) => {
      state.reads += 1;
      state.running += 1;
      state.mostRunning = Math.max(state.mostRunning, state.running);
      await turns(3);
      state.running -= 1;
      const index = after ?? 0;
      return {
        items: Array.from({ length: size }, (_, j) => Buffer.from(JSON.stringify({ index, j, pad }))),
        next: index + 1 < BATCHES ? index + 1 : null,
      };
    };
    const iterator = batchesOf(read)[Symbol.asyncIterator]();
    const first = await iterator.next();
    expect(first.value).toHaveLength(100);
    const body = exportBody('ndjson', [], first, iterator);
    const held: (() => void)[] = [];
    let taken = 0;
    const slow = new Writable({
      highWaterMark: 1024,
      write(_chunk: Buffer, _encoding, done) {
        taken += 1;
        held.push(done);
      },
    });
    const finished = pipeline(body, slow);
    // A client that has stopped reading: the response took one chunk; the body holds at most one more, and one read
    // runs (or ran) ahead of that. Nothing more is read however long it waits.
    await turns(100);
    expect(taken).toBe(1);
    const stalled = state.reads;
    expect(stalled).toBeLessThanOrEqual(taken + 2);
    await turns(100);
    expect(state.reads).toBe(stalled);
    // Reading on, every batch is read once, in order, never two reads at once, never more than two batches beyond
    // what the response took.
    while (held.length > 0 || state.reads < BATCHES) {
      while (held.length > 0) held.shift()!();
      await turns(5);
      expect(state.reads).toBeLessThanOrEqual(taken + 2);
    }
    await finished;
    expect(state.reads).toBe(BATCHES);
    expect(state.mostRunning).toBe(1);
    expect(taken).toBe(BATCHES);
    expect(EXPORT_BATCH).toBeGreaterThan(100);
  });

  it('batchesOf: a read ahead that fails after the client left is no unhandled rejection; one that is wanted fails the body', async () => {
    const failing = (failAt: number): BatchReader<number> => {
      let reads = 0;
      return async (after) => {
        reads += 1;
        await turns(1);
        if (reads === failAt) throw new Error('the connection was lost');
        return { items: [Buffer.from('{}')], next: (after ?? 0) + 1 };
      };
    };
    // The client takes two batches and leaves while the third is read ahead (and fails).
    const left = batchesOf(failing(3))[Symbol.asyncIterator]();
    await left.next();
    await left.next();
    await turns(5);
    await left.return(undefined);
    await turns(5);
    // The client wants the batch whose read failed: the export fails.
    const wanted = batchesOf(failing(3))[Symbol.asyncIterator]();
    await wanted.next();
    await wanted.next();
    await expect(wanted.next()).rejects.toThrow('the connection was lost');
  });
});
