// `secinv api …`: the API of a running server from the shell, through the typed client. Each list's filter flags are
// generated from the QuerySpec the server parses with (a parameter added there is a flag here); values are passed as
// typed, and the server's 400 lists every problem. Output formats in src/cli/render.ts, profiles in profiles.ts.
import { Command, Option } from 'commander';
import { createClient, SecinvApiError, SecinvConnectionError, type Client, type PageMeta } from '../client/index.js';
import { loadClientSettings } from '../config.js';
import { getAssetSpec, listAssetsSpec } from '../domain/assets.js';
import { UserError } from '../domain/errors.js';
import type { ParamSpec } from '../domain/query.js';
import { listRisksSpec, riskIncludes } from '../domain/risks.js';
import { listVulnerabilitiesSpec } from '../domain/vulnerabilities.js';
import type { Io } from './io.js';
import { resolveConnection, saveProfile, type Connection } from './profiles.js';
import { emit, outputFormats, writingStdout, project, recordWriter, writeOne, type OutputFormat } from './render.js';
import { readKey } from './secret.js';

type Json = Record<string, unknown>;
type Query = Record<string, string>;

interface Resource {
  spec: { params: Record<string, ParamSpec>; options: { paging?: readonly string[] } };
  /** Table columns without --fields. */
  columns: readonly string[];
  list(client: Client, query: Query): Promise<{ data: Json[]; meta: Json }>;
  all(client: Client, query: Query): AsyncGenerator<Json>;
  export(client: Client, query: Query): AsyncGenerator<Json>;
}

// The flags hold strings as typed; the server validates them (and lists every problem in one 400).
const typed = (query: Query): never => query as never;
const records = (iterator: AsyncGenerator<unknown>) => iterator as AsyncGenerator<Json>;

const resources: Record<'assets' | 'risks' | 'vulnerabilities', Resource> = {
  assets: {
    spec: listAssetsSpec,
    columns: ['name', 'provider', 'resourceType', 'region', 'riskScore', 'vulnerabilityScore', 'id'],
    list: async (c, q) => await c.assets.list(typed(q)),
    all: (c, q) => records(c.assets.all(typed(q))),
    export: (c, q) => records(c.assets.export(typed(q))),
  },
  risks: {
    spec: listRisksSpec,
    columns: ['severityLevel', 'score', 'lifecycleState', 'riskTypeId', 'discoveredAt', 'meta.assetName', 'id'],
    list: async (c, q) => await c.risks.list(typed(q)),
    all: (c, q) => records(c.risks.all(typed(q))),
    export: (c, q) => records(c.risks.export(typed(q))),
  },
  vulnerabilities: {
    spec: listVulnerabilitiesSpec,
    columns: ['vulnerabilityId', 'severityLevel', 'hasKev', 'hasExploit', 'firstObservedAt', 'assetId'],
    list: async (c, q) => await c.vulnerabilities.list(typed(q)),
    all: (c, q) => records(c.vulnerabilities.all(typed(q))),
    export: (c, q) => records(c.vulnerabilities.export(typed(q))),
  },
};

const kebab = (name: string) => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/** A flag for a query parameter; a list flag may be repeated (its values are joined) or given as a comma list. */
export function paramOption(name: string, spec: ParamSpec): Option {
  const values =
    spec.kind === 'enum' ? spec.values : spec.kind === 'list' && spec.item.type === 'enum' ? spec.item.values : null;
  const placeholder =
    spec.kind === 'list'
      ? '<list>'
      : spec.kind === 'boolean'
        ? '<true|false>'
        : spec.kind === 'datetime'
          ? '<date>'
          : '<value>';
  const option = new Option(
    `--${kebab(name)} ${placeholder}`,
    `${spec.description}${values && values.length <= 20 ? ` (${values.join(', ')})` : ''}`,
  );
  if (spec.kind === 'list')
    option.argParser((value: string, previous?: string) => (previous ? `${previous},${value}` : value));
  return option;
}

/** The parameters given as flags, by their API names. */
const queryOf = (params: Record<string, ParamSpec>, opts: Json): Query =>
  Object.fromEntries(
    Object.keys(params).flatMap((name) => {
      const value = opts[name];
      return typeof value === 'string' ? [[name, value] as const] : [];
    }),
  );

interface CommonFlags {
  url?: string;
  key?: string;
  profile?: string;
  output?: OutputFormat;
  fields?: string;
  all?: boolean;
  timeout: number;
}

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
async function* everyRecord(resource: Resource, client: Client, query: Query): AsyncGenerator<Json> {
  const exported = resource.export(client, query);
  let first: IteratorResult<Json>;
  try {
    first = await exported.next();
  } catch (error) {
    // A server from before exports refuses the format parameter: walk the pages instead.
    if (!noExport(error)) throw error;
    yield* resource.all(client, query);
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

async function runList(resource: Resource, opts: CommonFlags & Json, io: Io): Promise<void> {
  const { client, connection } = connect(opts, io);
  const format = opts.output ?? (io.stdout.isTTY === true ? 'table' : 'json');
  const fields = opts.fields
    ?.split(',')
    .map((f) => f.trim())
    .filter((f) => f !== '');
  const query = queryOf(resource.spec.params, opts);
  // Risks select their fields on the server (the top-level risk fields; the embeds follow --include).
  if (fields && 'fields' in resource.spec.params) {
    const top = [...new Set(fields.map((f) => f.split('.')[0]!))].filter(
      (f) => !(riskIncludes as readonly string[]).includes(f),
    );
    if (top.length > 0) query.fields = top.join(',');
  }
  const paging = (resource.spec.options.paging ?? []).filter((p) => p in query);
  if (opts.all === true && paging.length > 0)
    throw new UserError(`--all reads every record: ${paging.map((p) => `--${kebab(p)}`).join(', ')} shape one page`);
  await writingStdout(io, () =>
    explained(connection, io, async () => {
      if (opts.all === true) {
        const writer = recordWriter(io, { format, fields, defaultColumns: resource.columns });
        for await (const record of everyRecord(resource, client, query)) await writer.write(record);
        return writer.end();
      }
      const page = await resource.list(client, query);
      if (format === 'json') {
        const data = fields ? page.data.map((r) => project(r, fields)) : page.data;
        await emit(io, `${JSON.stringify({ data, meta: page.meta }, null, 2)}\n`);
      } else {
        const writer = recordWriter(io, { format, fields, defaultColumns: resource.columns });
        for (const record of page.data) await writer.write(record);
        await writer.end();
      }
      footer(page.meta, io);
    }),
  );
}

const common = (command: Command): Command =>
  command
    .option('--url <url>', 'the server, e.g. http://127.0.0.1:8080 (env SECINV_URL)')
    .option('--key <key>', 'a tenant API key (env SECINV_API_KEY)')
    .option('--profile <name>', 'a profile of the config file (env SECINV_PROFILE; default: default)')
    .addOption(
      new Option(
        '-o, --output <format>',
        'table (default on a terminal), json (default otherwise), ndjson, csv, yaml',
      ).choices(outputFormats),
    )
    .option('--fields <list>', 'only these fields (comma list; dotted paths reach into objects: meta.assetName)')
    .option(
      '--timeout <seconds>',
      'give up on an answer after this long',
      (v) => {
        if (!/^\d+$/.test(v) || Number(v) < 1) throw new UserError('--timeout must be a whole number of seconds >= 1');
        return Number(v);
      },
      30,
    );

/** Adds `secinv api …` under the given command. */
export function apiCommands(api: Command, sub: (name: string) => Command, io: Io): void {
  api.description('Ask a running secinv server, with a tenant key (profiles: secinv api configure).');
  for (const [name, resource] of Object.entries(resources)) {
    const command = common(sub(name)).description(`List ${name} (one page, or every one with --all).`);
    command.option('--all', 'every record, streamed (the export when the server has it, else cursors or pages)');
    for (const [param, spec] of Object.entries(resource.spec.params))
      if (param !== 'format' && param !== 'fields') command.addOption(paramOption(param, spec));
    command.action(async (opts: CommonFlags & Json) => runList(resource, opts, io));
  }

  const asset = common(sub('asset')).description('One asset by its id.').argument('<id>', 'the asset id');
  for (const [param, spec] of Object.entries(getAssetSpec.params)) asset.addOption(paramOption(param, spec));
  asset.action(async (id: string, opts: CommonFlags & Json) => {
    const { client, connection } = connect(opts, io);
    const format = opts.output ?? (io.stdout.isTTY === true ? 'table' : 'json');
    const fields = opts.fields?.split(',').map((f) => f.trim());
    const record = await explained(connection, io, () =>
      client.assets.get(id, typed(queryOf(getAssetSpec.params, opts))),
    );
    await writeOne(io, record, format, fields);
  });

  sub('configure')
    .description('Save the server and key of a profile (file mode 0600); the key is read from --key or standard input.')
    .option('--profile <name>', 'the profile (default: default)', 'default')
    .option('--url <url>', 'the server, e.g. http://127.0.0.1:8080')
    .option('--key <key>', 'the key (else read from standard input, not echoed on a terminal)')
    .action(async (opts: { profile: string; url?: string; key?: string }) => {
      if (opts.url !== undefined && !/^https?:\/\//i.test(opts.url))
        throw new UserError(`--url must start with http:// or https://: ${opts.url}`);
      const key = opts.key ?? (await readKey(io));
      const { configFile } = loadClientSettings({});
      saveProfile(configFile, opts.profile, { ...(opts.url ? { url: opts.url } : {}), ...(key ? { key } : {}) }, io);
      io.stderr.write(
        `secinv: profile '${opts.profile}' saved in ${configFile}${opts.url ? ` (url ${opts.url})` : ''}${key ? ', key set' : ''}\n`,
      );
    });
}
