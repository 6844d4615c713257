// The CSV rows of an export, written from the bytes of stored JSON: byte for byte the rows of csvRow over the parsed
// items, whatever the items hold.
import { describe, expect, it } from 'vitest';
import { csvRow } from '../../src/http/csv.js';
import { csvItems } from '../../src/http/csv-items.js';

const COLUMNS = ['id', 'title', 'score', 'flag', 'nested', 'list', 'missing', 'späť', 'quote"key'];

/** The rows as csvRow writes them from the parsed items: the definition. */
const parsedRows = (columns: readonly string[], items: readonly Buffer[]): string =>
  items
    .map((item) => {
      const record = JSON.parse(item.toString('utf8')) as Record<string, unknown>;
      return csvRow(columns.map((column) => record[column]));
    })
    .join('');

/** Compared as the bytes sent: the parsed rows' text is UTF-8 encoded as a response body encodes it. */
const expectSameRows = (items: readonly Buffer[], columns: readonly string[] = COLUMNS) =>
  expect(csvItems(columns).rows(items).toString('hex')).toBe(Buffer.from(parsedRows(columns, items)).toString('hex'));

const stored = (value: unknown): Buffer => Buffer.from(JSON.stringify(value));

const TEXTS = [
  '',
  'plain',
  'a,b',
  'say "hi"',
  'line\nbreak',
  'cr\rhere',
  '=1+2',
  '+1',
  '-1',
  '@SUM(A1)',
  '\tTAB',
  '\rCR',
  "'quoted",
  'ünï ✓ 😀',
  '\u0000\u001f\u007f',
  '\ud800 lone',
  '\u2028\u2029',
  'back\\slash\\',
  '"',
  '\\"',
  '{"not":"json"}',
  '[1,2]',
];

/** A pseudo-random generator, so that a failure repeats. */
function random(seed: number) {
  let state = seed;
  return () => {
    state = (Math.imul(state, 1103515245) + 12345) & 0x7fffffff;
    return state / 0x80000000;
  };
}

function randomValue(next: () => number, depth: number): unknown {
  const pick = Math.floor(next() * (depth > 2 ? 5 : 8));
  const text = () => TEXTS[Math.floor(next() * TEXTS.length)]!;
  switch (pick) {
    case 0:
      return null;
    case 1:
      return next() < 0.5;
    case 2:
      return [0, -1, 3.5, 1e21, -2.5e-7, 123456789012, Number.MAX_SAFE_INTEGER][Math.floor(next() * 7)];
    case 3:
    case 4:
      return text();
    case 5:
      return [];
    case 6:
      return Array.from({ length: Math.floor(next() * 4) }, () => randomValue(next, depth + 1));
    default:
      return Object.fromEntries(
        Array.from({ length: Math.floor(next() * 4) }, (_, i) => [
          i === 0 ? text() : `k${i}`,
          randomValue(next, depth + 1),
        ]),
      );
  }
}

describe('CSV rows of stored items', () => {
  it('text, numbers, booleans, null, nested values and absent fields as csvRow writes them', () => {
    const items = TEXTS.map((title, i) =>
      stored({
        id: `id-${i}`,
        title,
        score: [0, -1, 2.5, 1e21, 7e-7][i % 5],
        flag: i % 3 === 0 ? null : i % 3 === 1,
        nested: { title, list: [title, i, null, { deep: [title] }], empty: {} },
        list: i % 2 === 0 ? [] : [title, [], {}],
        späť: title,
        'quote"key': title,
        extra: { ignored: title },
      }),
    );
    expectSameRows(items);
  });

  it('keys in any order, repeated keys (the last one counts), an empty object, values that are only null', () => {
    expectSameRows([
      Buffer.from('{"list":[1],"title":"b","id":"a"}'),
      Buffer.from('{"title":"first","title":"second,"}'),
      Buffer.from('{}'),
      Buffer.from('{"nested":null,"list":[null],"title":null}'),
      Buffer.from('{"id":"\\u0041\\/","title":"\\"="}'),
      Buffer.from('{"\\u0069d":"escaped key"}'),
    ]);
  });

  it('JSON that is not JSON.stringify output (whitespace) is parsed, with the same rows', () => {
    expectSameRows([
      Buffer.from('{ "id" : "a" , "nested" : { "b" : [ 1 , 2 ] } }'),
      Buffer.from('{"nested":{"b": [1]}}'),
      Buffer.from('\n{"id":"a"}'),
    ]);
  });

  it('JSON that is not an object fails as parsing it does', () => {
    expect(() => csvItems(COLUMNS).rows([Buffer.from('{"id":"a"')])).toThrow(SyntaxError);
    expect(() => csvItems(COLUMNS).rows([Buffer.from('{"id":nope}')])).toThrow(SyntaxError);
  });

  it('random documents', () => {
    const next = random(7);
    const items = Array.from({ length: 2000 }, () =>
      stored(Object.fromEntries(COLUMNS.filter(() => next() < 0.8).map((c) => [c, randomValue(next, 0)]))),
    );
    expectSameRows(items);
  });

  it('a batch whose rows outgrow the first buffer (every byte a quote to double)', () => {
    const quotes = '"'.repeat(5000);
    expectSameRows(Array.from({ length: 20 }, () => stored({ nested: [quotes, quotes], title: quotes })));
  });

  it('writes the header row of its columns', () => {
    expect(csvItems(['a', 'b,c']).header).toBe('a,"b,c"\r\n');
  });
});
