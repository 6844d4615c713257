// Streaming a report: the findings one by one, the rest as a small skeleton, in bounded memory; gzip, UTF-16 and
// standard input; truncated and malformed input named by line and JSON path.
import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { HEAD_BYTES } from '../../src/input/detect.js';
import { openReport } from '../../src/input/source.js';
import { JsonStreamError, streamJson, type StreamedElement } from '../../src/input/stream.js';

const fixture = (path: string): Buffer => readFileSync(new URL(`../fixtures/ingest/${path}`, import.meta.url));

async function* chunked(bytes: Buffer, size: number): AsyncGenerator<Buffer> {
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}

async function collect(input: AsyncIterable<Buffer>, streamed: string[][]): Promise<StreamedElement[]> {
  const out: StreamedElement[] = [];
  for await (const element of streamJson(input, streamed))
    out.push({ ...element, skeleton: structuredClone(element.skeleton) });
  return out;
}

const at = (value: unknown, path: readonly (string | number)[]): unknown =>
  path.reduce<unknown>((v, key) => (v as Record<string | number, unknown>)[key], value);

describe('streamJson', () => {
  it('yields every finding of a Trivy report with its path, and the rest as the skeleton', async () => {
    const bytes = fixture('trivy/trivy-image-teamdojo-multi-target.json');
    const parsed = JSON.parse(bytes.toString()) as { Results: { Target: string; Vulnerabilities?: unknown[] }[] };
    const elements = await collect(chunked(bytes, 4096), [['Results', '*', 'Vulnerabilities', '*']]);
    const findings = elements.slice(0, -1);
    expect(findings.length).toBe(parsed.Results.reduce((n, r) => n + (r.Vulnerabilities?.length ?? 0), 0));
    for (const { path, value } of findings) expect(value).toEqual(at(parsed, path));
    // Fields before the findings are in the skeleton when the first finding arrives.
    const firstSkeleton = findings[0]?.skeleton as {
      ArtifactName: string;
      Results: { Target: string; Vulnerabilities: unknown[] }[];
    };
    expect(firstSkeleton.ArtifactName).toBe('teamdojo:latest');
    expect(firstSkeleton.Results[0]?.Target).toBe(parsed.Results[0]?.Target);
    // The finished skeleton is the document without the streamed elements.
    const expected = structuredClone(parsed);
    for (const result of expected.Results) if (result.Vulnerabilities) result.Vulnerabilities = [];
    expect(elements.at(-1)).toMatchObject({ path: [], value: expected });
  });

  it('gives the same elements whatever the chunk size, multi-byte characters split included', async () => {
    const bytes = Buffer.from(
      JSON.stringify({
        matches: [{ a: 'é 🙂 ü' }, { a: '€'.repeat(50) }, 3, null, [1, { b: 'ß' }]],
        descriptor: { name: 'grype' },
      }),
    );
    // The skeleton is the document as far as read, which depends on the chunks; paths and values do not.
    const elements = async (size: number) =>
      (await collect(chunked(bytes, size), [['matches', '*']])).map(({ path, value }) => ({ path, value }));
    const whole = await elements(bytes.length);
    for (const size of [1, 2, 3, 7]) expect(await elements(size)).toEqual(whole);
    expect(whole.map((e) => e.value)).toEqual([
      { a: 'é 🙂 ü' },
      { a: '€'.repeat(50) },
      3,
      null,
      [1, { b: 'ß' }],
      { matches: [], descriptor: { name: 'grype' } },
    ]);
  });

  it('streams the elements of a top-level array (Prowler OCSF) and of several arrays at once', async () => {
    const prowler = fixture('assets/prowler-ocsf-kubernetes.json');
    const elements = await collect(chunked(prowler, 1000), [['*']]);
    expect(elements.slice(0, -1).map((e) => e.value)).toEqual(JSON.parse(prowler.toString()));
    expect(elements.at(-1)?.value).toEqual([]);
    const two = await collect(chunked(Buffer.from('{"a": [1, 2], "b": {"c": [3]}}'), 5), [
      ['a', '*'],
      ['b', 'c', '*'],
    ]);
    expect(two.map((e) => [e.path, e.value])).toEqual([
      [['a', 0], 1],
      [['a', 1], 2],
      [['b', 'c', 0], 3],
      [[], { a: [], b: { c: [] } }],
    ]);
  });

  it('names the JSON path where a truncated report stops, and the line of malformed JSON', async () => {
    const bytes = fixture('trivy/trivy-image-teamdojo-multi-target.json');
    const cut = bytes.subarray(0, bytes.indexOf('"VulnerabilityID"', 3000) + 10);
    const truncated = collect(chunked(cut, 512), [['Results', '*', 'Vulnerabilities', '*']]);
    await expect(truncated).rejects.toThrow(JsonStreamError);
    await expect(truncated).rejects.toThrow(
      /^ends before the JSON is complete \(truncated\?\), inside \$\.Results\[\d+\]\.Vulnerabilities\[\d+\]$/,
    );
    const malformed = collect(chunked(Buffer.from('{\n"a": [\n1,\n2 3]}'), 4), [['a', '*']]);
    await expect(malformed).rejects.toThrow(/^is not valid JSON at line 4, \$\.a: /);
  });
});

describe('openReport', () => {
  const all = async (bytes: AsyncIterable<Buffer>) => {
    const chunks: Buffer[] = [];
    for await (const chunk of bytes) chunks.push(chunk);
    return Buffer.concat(chunks);
  };

  it('reads a small file whole, a gzip file decompressed, standard input once', async () => {
    const bytes = fixture('openvex/openvex-vexctl-demo.json');
    for (const content of [bytes, gzipSync(bytes)]) {
      const opened = await openReport(() => Readable.from(chunked(content, 100)));
      expect(opened.head.equals(bytes)).toBe(true);
      expect(opened.complete).toBe(true);
      expect((await all(opened.bytes)).equals(bytes)).toBe(true);
    }
  });

  it('reads ahead only the head of a large report and then replays every byte', async () => {
    const big = Buffer.from(
      JSON.stringify({ matches: Array.from({ length: 20_000 }, (_, i) => ({ i, text: 'x'.repeat(20) })) }),
    );
    expect(big.length).toBeGreaterThan(4 * HEAD_BYTES);
    for (const content of [big, gzipSync(big)]) {
      const opened = await openReport(() => Readable.from(chunked(content, 16 * 1024)));
      expect(opened.head.length).toBe(HEAD_BYTES);
      expect(opened.complete).toBe(false);
      expect((await all(opened.bytes)).equals(big)).toBe(true);
    }
  });

  it('drops a UTF-8 byte order mark before the document, in whatever chunks it comes', async () => {
    const text = JSON.stringify({ matches: [{ a: 1 }], note: '\uFEFF inside a string stays' });
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)]);
    for (const content of [bytes, gzipSync(bytes)])
      for (const size of [1, 2, 4, content.length]) {
        const opened = await openReport(() => Readable.from(chunked(content, size)));
        expect(opened.head.toString()).toBe(text);
        expect((await collect(opened.bytes, [['matches', '*']])).map((e) => e.value)).toEqual([
          { a: 1 },
          { matches: [], note: '\uFEFF inside a string stays' },
        ]);
      }
    // Only at the start: after a value it is no JSON.
    await expect(collect(chunked(Buffer.from('{"a": 1}\uFEFF'), 4), [])).rejects.toBeInstanceOf(JsonStreamError);
  });

  it('reads UTF-16 with its byte order mark (little or big endian, gzip too) as UTF-8', async () => {
    // Characters outside the BMP are surrogate pairs in UTF-16: odd chunk sizes cut them and their code units apart.
    const text = `{"note": "é € 𝄞 🙂", "matches": [${'{"a": "ß𝄞"},'.repeat(2_000)}{}]}`;
    const utf8 = Buffer.from(text, 'utf8');
    const le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
    const be = Buffer.from(le);
    be.swap16();
    for (const content of [le, be, gzipSync(le)])
      for (const size of [1, 3, 7, 4096]) {
        const opened = await openReport(() => Readable.from(chunked(content, size)));
        expect(opened.head.equals(utf8.subarray(0, HEAD_BYTES))).toBe(true);
        expect((await all(opened.bytes)).equals(utf8)).toBe(true);
      }
    // Without a mark, bytes are read as they are.
    const bare = Buffer.from(text, 'utf16le');
    expect((await all((await openReport(() => Readable.from([bare]))).bytes)).equals(bare)).toBe(true);
  });

  it('a stream of strings (a generator of lines, as the demo imports) is read as their UTF-8', async () => {
    const lines = ['{"kind":"tenant"}\n', '{"name":"Zürich ✓"}\n', '\n'];
    const opened = await openReport(() => Readable.from(lines));
    expect((await all(opened.bytes)).toString('utf8')).toBe(lines.join(''));
  });

  it('a corrupt gzip stream fails on reading', async () => {
    const broken = gzipSync(fixture('openvex/openvex-many-statuses.json')).subarray(0, 60);
    await expect(openReport(() => Readable.from([broken])).then((o) => all(o.bytes))).rejects.toThrow(
      /unexpected end of file/,
    );
  });
});
