// The import's line splitter gives the lines `readline` gives (crlfDelay: Infinity), wherever the chunks of the input
// happen to be cut.
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { lines } from '../../src/import/lines.js';

const collect = async (iterable: AsyncIterable<string>): Promise<string[]> => {
  const out: string[] = [];
  for await (const line of iterable) out.push(line);
  return out;
};
const fromReadline = (bytes: Buffer) =>
  collect(createInterface({ input: Readable.from([bytes]), crlfDelay: Infinity }));

const INPUTS = [
  '',
  'one line without a break',
  'a\nb\n',
  'a\r\nb\r\nc',
  'a\rb\rc\r',
  '\n\n\r\n\r\r\n',
  '{"kind":"asset","record":{"name":"café ☕ 𝄞"}}\r\n{"kind":"asset"}\n  \n',
  '\uFEFF{"kind":"tenant"}\nlast',
  'x\r',
  '\r\n',
];

describe('lines', () => {
  for (const text of INPUTS) {
    it(`splits ${JSON.stringify(text).slice(0, 40)} as readline does, cut into chunks anywhere`, async () => {
      const bytes = Buffer.from(text, 'utf8');
      const expected = await fromReadline(bytes);
      expect(await collect(lines(Readable.from([bytes])))).toEqual(expected);
      // Two chunks cut at every byte, then one chunk per byte (a character's bytes apart).
      for (let cut = 0; cut <= bytes.length; cut += 1) {
        const chunks = [bytes.subarray(0, cut), bytes.subarray(cut)];
        expect(await collect(lines(Readable.from(chunks)))).toEqual(expected);
      }
      const single = [...bytes].map((b) => Buffer.from([b]));
      expect(await collect(lines(Readable.from(single)))).toEqual(expected);
    });
  }

  it('takes strings as well as bytes', async () => {
    expect(await collect(lines(Readable.from(['a\nb', 'c\r\nd'])))).toEqual(['a', 'bc', 'd']);
  });

  it('passes on an error of its input', async () => {
    const failing = new Readable({
      read() {
        this.destroy(new Error('ENOENT: no such file'));
      },
    });
    await expect(collect(lines(failing))).rejects.toThrow('ENOENT');
  });
});
