// The body of an export: read a batch at a time, as fast as its reader takes it and no faster.
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { describe, expect, it } from 'vitest';
import { exportBody } from '../../src/http/export.js';

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
});
