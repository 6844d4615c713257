// Streams a large JSON document in bounded memory: the elements of the arrays named by `streamed` patterns (the
// findings of a report, which make up nearly all of it) are yielded one by one as they complete, and everything else
// is assembled into a small skeleton, which each yielded element comes with as far as it has been read. Reports put
// their identifying fields (Trivy's Metadata, a Result's Target) before their findings, so a reader sees them in time.
import { StringDecoder } from 'node:string_decoder';
import { none, isMany, getManyValues } from 'stream-chain/defs.js';
import { jsonParser } from 'stream-json/core/parser.js';

export type JsonPath = readonly (string | number)[];

/** One element of a streamed array: where it is, its value, and the document's skeleton read so far. */
export interface StreamedElement {
  path: JsonPath;
  value: unknown;
  skeleton: unknown;
}

/** A document that is not JSON, or stops early; `path` is where. */
export class JsonStreamError extends Error {
  override name = 'JsonStreamError';
  constructor(
    message: string,
    readonly path: string,
    readonly line: number,
  ) {
    super(message);
  }
}

type Token = { name: string; value?: unknown };
interface Frame {
  container: Record<string, unknown> | unknown[];
  path: (string | number)[];
  key: string | null;
  /** Elements of an array seen so far: the next one's index (a streamed element is not kept in the array). */
  count: number;
  /** The element of a streamed array this container is the root of. */
  streamedRoot: boolean;
  /** Inside a streamed element (its root or below). */
  streaming: boolean;
}

/** `$.Results[0].Vulnerabilities[3]` */
export const formatPath = (path: JsonPath): string =>
  path.reduce<string>(
    (text, segment) => (typeof segment === 'number' ? `${text}[${segment}]` : `${text}.${segment}`),
    '$',
  );

const matches = (path: JsonPath, pattern: readonly string[]): boolean =>
  path.length === pattern.length && pattern.every((segment, i) => segment === '*' || segment === String(path[i]));

/**
 * Yields the elements of every array matching one of `streamed` (paths with `*` for any key or index, e.g.
 * `['Results', '*', 'Vulnerabilities', '*']` for the elements themselves), then the finished skeleton as the value
 * of a last element with an empty path. Throws JsonStreamError on malformed or truncated input.
 */
export async function* streamJson(
  input: AsyncIterable<Buffer | string>,
  streamed: readonly (readonly string[])[],
): AsyncGenerator<StreamedElement> {
  // Called with text, and once with `none` to flush at the end of the input (stream-chain's convention).
  const parse = jsonParser({ packValues: true, streamValues: false }) as unknown as (
    chunk: string | typeof none,
  ) => unknown;
  const decoder = new StringDecoder('utf8');
  const stack: Frame[] = [];
  let skeleton: unknown;
  let done = false;
  let line = 1;
  const ready: StreamedElement[] = [];

  const attach = (parent: Frame, value: unknown): void => {
    const { container } = parent;
    if (Array.isArray(container)) container.push(value);
    else if (parent.key !== null) container[parent.key] = value;
  };
  // The path of the value that starts now (an array's next index is taken by it).
  const nextPath = (): (string | number)[] => {
    const top = stack[stack.length - 1];
    if (!top) return [];
    if (Array.isArray(top.container)) return [...top.path, top.count++];
    return [...top.path, top.key ?? ''];
  };
  // Places a finished scalar or streamed element: out as a streamed element, or into its parent.
  const place = (value: unknown, path: (string | number)[], streamedRoot: boolean): void => {
    const top = stack[stack.length - 1];
    if (streamedRoot) {
      ready.push({ path, value, skeleton });
      return;
    }
    if (!top) {
      skeleton = value;
      done = true;
    } else attach(top, value);
  };
  const open = (container: Record<string, unknown> | unknown[]) => {
    const path = nextPath();
    const parent = stack[stack.length - 1];
    const streaming = parent?.streaming ?? false;
    const streamedRoot = !streaming && streamed.some((pattern) => matches(path, pattern));
    // The skeleton keeps its containers attached as they are read, so a streamed element sees the fields before it.
    if (!streamedRoot && !streaming) {
      if (!parent) skeleton = container;
      else attach(parent, container);
    }
    stack.push({ container, path, key: null, count: 0, streamedRoot, streaming: streaming || streamedRoot });
  };
  const close = () => {
    const frame = stack.pop();
    if (!frame) return;
    if (frame.streamedRoot) place(frame.container, frame.path, true);
    else if (frame.streaming) {
      const parent = stack[stack.length - 1];
      if (parent) attach(parent, frame.container);
    } else if (stack.length === 0) done = true;
  };
  const take = (token: Token) => {
    switch (token.name) {
      case 'startObject':
        return open({});
      case 'startArray':
        return open([]);
      case 'endObject':
      case 'endArray':
        return close();
      case 'keyValue': {
        const top = stack[stack.length - 1];
        if (top) top.key = String(token.value);
        return;
      }
      case 'stringValue':
      case 'numberValue':
      case 'nullValue':
      case 'trueValue':
      case 'falseValue': {
        const value = token.name === 'numberValue' ? Number(token.value) : token.value;
        const parent = stack[stack.length - 1];
        // Inside a streamed element a scalar's path is never asked for (errors name the innermost container), and
        // most values of a report are there: copying a path array for each is garbage.
        if (parent?.streaming) {
          if (Array.isArray(parent.container)) parent.count += 1;
          attach(parent, value);
          return;
        }
        const path = nextPath();
        place(
          value,
          path,
          streamed.some((pattern) => matches(path, pattern)),
        );
        return;
      }
    }
  };
  const where = () => formatPath(stack[stack.length - 1]?.path ?? []);
  const feed = (chunk: string | typeof none, flushing: boolean) => {
    let out: unknown;
    try {
      out = parse(chunk);
    } catch (error) {
      if (flushing)
        throw new JsonStreamError(`ends before the JSON is complete (truncated?), inside ${where()}`, where(), line);
      const reason = (error as Error).message.replace(/^Parser cannot parse input: /, '');
      throw new JsonStreamError(`is not valid JSON at line ${line}, ${where()}: ${reason}`, where(), line);
    }
    const tokens = isMany(out) ? (getManyValues(out) as Token[]) : out === none ? [] : [out as Token];
    for (const token of tokens) take(token);
  };

  for await (const chunk of input) {
    const text = typeof chunk === 'string' ? chunk : decoder.write(chunk);
    // Line by line, so an error names its line. indexOf, not a split on a look-behind: that regular expression alone
    // cost 40% of the parser's own time on a report written on one line.
    let start = 0;
    for (let end = text.indexOf('\n'); end !== -1; end = text.indexOf('\n', start)) {
      feed(text.slice(start, end + 1), false);
      line += 1;
      start = end + 1;
    }
    if (start < text.length) feed(start === 0 ? text : text.slice(start), false);
    yield* ready.splice(0);
  }
  feed(decoder.end(), false);
  feed(none, true);
  if (!done)
    throw new JsonStreamError(`ends before the JSON is complete (truncated?), inside ${where()}`, where(), line);
  yield* ready.splice(0);
  yield { path: [], value: skeleton, skeleton };
}
