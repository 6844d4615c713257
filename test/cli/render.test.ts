// The pure parts of `secinv api`'s output: column fitting, cells, dotted fields, and the formats on a plain stream.
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { cellText, fitWidths, project, recordWriter, valueAt, type OutputFormat } from '../../src/cli/render.js';

async function render(format: OutputFormat, records: Record<string, unknown>[], fields?: string[]) {
  const stdout = new PassThrough();
  let text = '';
  stdout.on('data', (c: Buffer) => (text += c.toString()));
  const writer = recordWriter({ stdout, stderr: new PassThrough() }, { format, fields, defaultColumns: ['id'] });
  for (const r of records) await writer.write(r);
  await writer.end();
  return text;
}

const records = [
  { id: 'a', score: 7.5, meta: { assetName: 'web' }, tags: ['x'], note: '=1+1' },
  { id: 'b', score: null, meta: null, tags: [], note: 'line\nbreak' },
];

describe('fitWidths', () => {
  it('leaves a table that fits, and without a width', () => {
    expect(fitWidths([10, 20], [2, 5], 40)).toEqual([10, 20]);
    expect(fitWidths([100, 200], [2, 5], undefined)).toEqual([100, 200]);
  });
  it('shrinks the widest column first, down to its header, then cuts headers, none below 6', () => {
    expect(fitWidths([10, 40], [2, 5], 32)).toEqual([10, 20]);
    expect(fitWidths([20, 20], [20, 20], 32)).toEqual([15, 15]);
    expect(fitWidths([8, 8, 8], [8, 8, 8], 10)).toEqual([6, 6, 6]);
  });
});

describe('cells and fields', () => {
  it('one line per cell; null as -, objects as JSON', () => {
    expect(cellText(null)).toBe('-');
    expect(cellText({ a: [1] })).toBe('{"a":[1]}');
    expect(cellText('two\nlines')).toBe('two lines');
    expect(cellText(false)).toBe('false');
  });
  it('dotted paths reach into objects', () => {
    expect(valueAt(records[0]!, 'meta.assetName')).toBe('web');
    expect(valueAt(records[1]!, 'meta.assetName')).toBeUndefined();
    expect(project(records[1]!, ['id', 'meta.assetName'])).toEqual({ id: 'b', 'meta.assetName': null });
  });
});

describe('formats', () => {
  it('ndjson: one compact record per line', async () => {
    expect(await render('ndjson', records, ['id', 'score'])).toBe('{"id":"a","score":7.5}\n{"id":"b","score":null}\n');
  });
  it('json: one array, also when empty', async () => {
    expect(JSON.parse(await render('json', records))).toEqual(records);
    expect(await render('json', [])).toBe('[]\n');
  });
  it('yaml: the records as one list', async () => {
    expect(parseYaml(await render('yaml', records))).toEqual(records);
  });
  it('csv: a header, nested values as JSON, formulas defused, line breaks quoted', async () => {
    expect(await render('csv', records, ['id', 'meta.assetName', 'tags', 'note'])).toBe(
      'id,meta.assetName,tags,note\r\na,web,"[""x""]",\'=1+1\r\nb,,[],"line\nbreak"\r\n',
    );
  });
  it('table: default columns, padded', async () => {
    expect(await render('table', records, ['id', 'score'])).toBe('id  score\na   7.5\nb   -\n');
  });
});
