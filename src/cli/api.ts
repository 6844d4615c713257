// `secinv api …`: the API of a running server from the shell, through the typed client. Its flags are declared in
// src/cli/commands/api.ts; output formats in src/cli/render.ts, profiles in profiles.ts.
import { createClient, SecinvApiError, SecinvConnectionError, type Client, type PageMeta } from '../client/index.js';
import { loadClientSettings } from '../config.js';
import { UserError } from '../domain/errors.js';
import type { ParamSpec } from '../domain/query.js';
import { riskIncludes } from '../domain/risks.js';
import { kebab } from './command.js';
import type { Io } from './io.js';
import { resolveConnection, saveProfile, type Connection } from './profiles.js';
import { emit, writingStdout, project, recordWriter, writeOne, type OutputFormat } from './render.js';
import { readKey } from './secret.js';

// What the commands are given: their flags are declared in src/cli/commands/api.ts, which checks they agree.
export type ListName = 'assets' | 'risks' | 'vulnerabilities';
export interface CommonFlags {
  url: string | undefined;
  key: string | undefined;
  profile: string | undefined;
  output: OutputFormat | undefined;
  fields: string | undefined;
  timeout: number;
}
export interface ListFlags extends CommonFlags {
  all: true | undefined;
}
export interface ChangesFlags extends CommonFlags {
  follow: true | undefined;
  /** Seconds. */
  interval: number | undefined;
}
export interface ConfigureFlags {
  profile: string;
  url: string | undefined;
  key: string | undefined;
}

type Json = Record<string, unknown>;
type Query = Record<string, string>;

/** A list as its command declares it (LISTS): its name, the spec of its query and its table columns. */
interface List {
  name: ListName;
  spec: { params: Record<string, ParamSpec>; options: { paging?: readonly string[] } };
  columns: readonly string[];
}

interface Calls {
  list(client: Client, query: Query): Promise<{ data: Json[]; meta: Json }>;
  all(client: Client, query: Query): AsyncGenerator<Json>;
  export(client: Client, query: Query): AsyncGenerator<Json>;
}

// The flags hold strings as typed; the server validates them (and lists every problem in one 400).
const typed = (query: Query): never => query as never;
const records = (iterator: AsyncGenerator<unknown>) => iterator as AsyncGenerator<Json>;

const calls: Record<ListName, Calls> = {
  assets: {
    list: async (c, q) => await c.assets.list(typed(q)),
    all: (c, q) => records(c.assets.all(typed(q))),
    export: (c, q) => records(c.assets.export(typed(q))),
  },
  risks: {
    list: async (c, q) => await c.risks.list(typed(q)),
    all: (c, q) => records(c.risks.all(typed(q))),
    export: (c, q) => records(c.risks.export(typed(q))),
  },
  vulnerabilities: {
    list: async (c, q) => await c.vulnerabilities.list(typed(q)),
    all: (c, q) => records(c.vulnerabilities.all(typed(q))),
    export: (c, q) => records(c.vulnerabilities.export(typed(q))),
  },
};

function connect(opts: CommonFlags, io: Io): { client: Client; connection: Connection } {
  const connection = resolveConnection(loadClientSettings(opts), io);
  const client = createClient({ baseUrl: connection.url, apiKey: connection.key, timeoutMs: opts.timeout * 1000 });
  return { client, connection };
}

/** Runs a call, turning the client's errors into one line for people (and every problem of a 400 before it). */
async function explained<T>(connection: Connection, io: Io, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof SecinvConnectionError) throw new UserError(error.message);
    if (!(error instanceof SecinvApiError)) throw error;
    const request = error.requestId ? ` (request id ${error.requestId})` : '';
    if (error.status === 401)
      throw new UserError(`${connection.url} refused the API key from ${connection.keySource} (401 unauthorized)`);
    if (error.status === 400) {
      for (const p of error.problems) io.stderr.write(`${p.field ? `${p.field}: ` : ''}${p.message}\n`);
      const n = error.problems.length;
      throw new UserError(`${connection.url} rejected the request: ${n} problem${n === 1 ? '' : 's'}${request}`);
    }
    throw new UserError(`${connection.url} answered ${error.status} ${error.code}: ${error.message}${request}`);
  }
}

const noExport = (error: unknown) =>
  error instanceof SecinvApiError && error.status === 400 && error.problems.some((p) => p.field === 'format');

/** Every record: one NDJSON download when the server exports, else cursors or pages. */
async function* everyRecord(list: Calls, client: Client, query: Query): AsyncGenerator<Json> {
  const exported = list.export(client, query);
  let first: IteratorResult<Json>;
  try {
    first = await exported.next();
  } catch (error) {
    // A server from before exports refuses the format parameter: walk the pages instead.
    if (!noExport(error)) throw error;
    yield* list.all(client, query);
    return;
  }
  if (first.done === true) return;
  yield first.value;
  yield* exported;
}

function footer(meta: Json, io: Io): void {
  const cursor = typeof meta.cursor === 'string' ? meta.cursor : null;
  const page = meta as Partial<PageMeta>;
  const parts: string[] = [];
  if (typeof page.total === 'number') parts.push(`${page.total} in all`);
  if (typeof page.page === 'number' && typeof page.perPage === 'number' && typeof page.total === 'number')
    parts.unshift(`page ${page.page} of ${Math.max(1, Math.ceil(page.total / page.perPage))}`);
  if (cursor !== null) parts.push(`next: --cursor ${cursor}`);
  else if (page.hasNextPage === true) parts.push(`next: --page ${(page.page ?? 1) + 1}`);
  if (parts.length > 0) io.stderr.write(`${parts.join('; ')}; every record: --all\n`);
}

const fieldList = (fields: string | undefined) =>
  fields
    ?.split(',')
    .map((f) => f.trim())
    .filter((f) => f !== '');

/** One page of a list, or every record with --all; `query` holds the filter flags given, by their API names. */
export async function runList(list: List, opts: ListFlags, query: Query, io: Io): Promise<void> {
  const { client, connection } = connect(opts, io);
  const format = opts.output ?? (io.stdout.isTTY === true ? 'table' : 'json');
  const fields = fieldList(opts.fields);
  const { params, options } = list.spec;
  const call = calls[list.name];
  // Risks select their fields on the server (the top-level risk fields; the embeds follow --include).
  if (fields && 'fields' in params) {
    const top = [...new Set(fields.map((f) => f.split('.')[0]!))].filter(
      (f) => !(riskIncludes as readonly string[]).includes(f),
    );
    if (top.length > 0) query.fields = top.join(',');
  }
  const paging = (options.paging ?? []).filter((p) => p in query);
  if (opts.all === true && paging.length > 0)
    throw new UserError(`--all reads every record: ${paging.map((p) => `--${kebab(p)}`).join(', ')} shape one page`);
  await writingStdout(io, () =>
    explained(connection, io, async () => {
      if (opts.all === true) {
        const writer = recordWriter(io, { format, fields, defaultColumns: list.columns });
        for await (const record of everyRecord(call, client, query)) await writer.write(record);
        return writer.end();
      }
      const page = await call.list(client, query);
      if (format === 'json') {
        const data = fields ? page.data.map((r) => project(r, fields)) : page.data;
        await emit(io, `${JSON.stringify({ data, meta: page.meta }, null, 2)}\n`);
      } else {
        const writer = recordWriter(io, { format, fields, defaultColumns: list.columns });
        for (const record of page.data) await writer.write(record);
        await writer.end();
      }
      footer(page.meta, io);
    }),
  );
}

/**
 * The change log: every change up to now in the output format, or with --follow each change as one NDJSON line as it
 * is written, until SIGINT or SIGTERM. Either way the position reached goes to stderr last, as `next: --cursor C`, so
 * that a script goes on from there; a signal ends either walk there.
 */
export async function runChanges(columns: readonly string[], opts: ChangesFlags, query: Query, io: Io): Promise<void> {
  if (opts.follow !== true && opts.interval !== undefined)
    throw new UserError('--interval is the wait of --follow between two looks: give --follow too');
  if (opts.follow === true && opts.output !== undefined && opts.output !== 'ndjson')
    throw new UserError(`--follow prints NDJSON, one change per line: --output ${opts.output} is not for it`);
  const { client, connection } = connect(opts, io);
  const fields = fieldList(opts.fields);
  const stop = new AbortController();
  const { cursor, ...filters } = query;
  // The filters as typed (the server checks them), with how the walk ends and waits.
  const feed =
    opts.follow === true
      ? client.changes.follow(cursor, {
          ...filters,
          intervalMs: (opts.interval ?? 5) * 1000,
          signal: stop.signal,
        })
      : client.changes.all({ ...query, signal: stop.signal });
  const format = opts.follow === true ? 'ndjson' : (opts.output ?? (io.stdout.isTTY === true ? 'table' : 'json'));
  // A signal ends the walk, which ends the loop: a normal end, exit 0, the position reached printed. A second signal is
  // not caught: it kills.
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    await writingStdout(io, () =>
      explained(connection, io, async () => {
        const writer = recordWriter(io, { format, fields, defaultColumns: columns });
        for await (const change of feed) await writer.write(change);
        await writer.end();
      }),
    );
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    if (feed.cursor !== undefined) io.stderr.write(`next: --cursor ${feed.cursor}\n`);
  }
}

/** One asset by its id; `query` holds the flags of its parameters given. */
export async function showAsset(id: string, opts: CommonFlags, query: Query, io: Io): Promise<void> {
  const { client, connection } = connect(opts, io);
  const format = opts.output ?? (io.stdout.isTTY === true ? 'table' : 'json');
  const fields = opts.fields?.split(',').map((f) => f.trim());
  const record = await explained(connection, io, () => client.assets.get(id, typed(query)));
  await writeOne(io, record, format, fields);
}

/** Saves the server and key of a profile; the key comes from --key or standard input. */
export async function configureProfile(opts: ConfigureFlags, io: Io): Promise<void> {
  if (opts.url !== undefined && !/^https?:\/\//i.test(opts.url))
    throw new UserError(`--url must start with http:// or https://: ${opts.url}`);
  const key = opts.key ?? (await readKey(io));
  const { configFile } = loadClientSettings({});
  saveProfile(configFile, opts.profile, { ...(opts.url ? { url: opts.url } : {}), ...(key ? { key } : {}) }, io);
  io.stderr.write(
    `secinv: profile '${opts.profile}' saved in ${configFile}${opts.url ? ` (url ${opts.url})` : ''}${key ? ', key set' : ''}\n`,
  );
}

/** The metric answers as records, one per severity (of each interval): a table's rows, CSV's, NDJSON's lines. */
export async function runMetrics(
  kind: 'findings' | 'remediation',
  opts: CommonFlags,
  query: Query,
  io: Io,
): Promise<void> {
  const { client, connection } = connect(opts, io);
  const format = opts.output ?? (io.stdout.isTTY === true ? 'table' : 'json');
  const fields = fieldList(opts.fields);
  await writingStdout(io, () =>
    explained(connection, io, async () => {
      const answer =
        kind === 'findings'
          ? await client.metrics.findings(typed(query))
          : await client.metrics.remediation(typed(query));
      if (format === 'json') return emit(io, `${JSON.stringify(answer, null, 2)}\n`);
      const rows: Json[] =
        kind === 'findings'
          ? (answer.data as { start: string; end: string; severities: Record<string, Json> }[]).flatMap((interval) =>
              Object.entries(interval.severities).map(([severityLevel, counts]) => ({
                start: interval.start,
                end: interval.end,
                severityLevel,
                ...counts,
              })),
            )
          : Object.entries(answer.data as Record<string, Json>).map(([severityLevel, r]) => ({ severityLevel, ...r }));
      const writer = recordWriter(io, { format, fields, defaultColumns: Object.keys(rows[0] ?? {}) });
      for (const row of rows) await writer.write(row);
      await writer.end();
    }),
  );
}
