// The only reader of process.env. Every setting is one entry of the table below (its variable, its flag, its default,
// its parser and its help): the Config type, loadConfig, the environment list of `--help` and the help of the flags
// that set them are all made from it. Settings are validated once, frozen, and passed down; flags override them.
import { availableParallelism, homedir } from 'node:os';
import { join } from 'node:path';
import { UserError } from './domain/errors.js';
import { FIRST_RETRY_MS } from './domain/webhooks.js';

/** One setting. `F` is its flag's literal (`--db <url>`), `C` the other settings its computed default reads. */
export interface Setting<T, F extends string = never, C = never> {
  env: `SECINV_${string}`;
  /** What it is, in `--help`: the flag's help and the environment list are made from it. */
  help: string;
  /** The flag that takes precedence over the variable, on the commands that take it. */
  flag?: F;
  /** Reads the flag's or the variable's text; a bad one is a UserError that names it. */
  parse: (text: string, env: string) => T;
  /** When neither is given: this value, or one computed from the other settings once they are read. */
  fallback: T | ((settings: C) => T);
  /** `secinv demo`'s default instead, which keeps its own database and a quieter log. */
  demo?: T;
  /** The default in words, where it is not the value itself (computed, or none). */
  shown?: string;
}

/** A setting as declared: its flag present when it has one, its fallback a value unless it is computed. */
type Declared<T, F extends string, C> = Setting<T, F, C> &
  ([F] extends [never] ? unknown : { flag: F }) &
  ([C] extends [never] ? { fallback: T } : unknown);

// F is inferred from a flag given (never without one), C from a computed fallback's parameter: what Declared says.
const setting = <T, const F extends `--${string} <${string}>` = never, C = never>(s: Setting<T, F, C>) =>
  s as Declared<T, F, C>;

const text = (value: string) => value;

const integer =
  (min: number, max: number) =>
  (value: string, env: string): number => {
    if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max)
      throw new UserError(`invalid ${env} '${value}' (an integer from ${min} to ${max})`);
    return Number(value);
  };

// A port is named in words, not by its variable: the same message answers the flag and the variable.
const port = (what: string) => (value: string) => {
  if (!/^\d{1,5}$/.test(value) || Number(value) > 65535) throw new UserError(`invalid ${what} '${value}' (0 to 65535)`);
  return Number(value);
};

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
type LogLevel = (typeof LOG_LEVELS)[number];
/** A level typed as one (a bare 'info' would make the setting's type string). */
const level = (name: LogLevel) => name;

/** The points of an import run a test may kill it at: `record:N` is just after the Nth record was handed over. */
export const IMPORT_POINTS = /^(opened|record:[1-9]\d*|read|settled|indexed|committed|analyzed)$/;

const METRICS_TOKEN_MIN = 16;
const MAX_WORKERS = 256;
const QUEUE_TIMEOUT_MS = 20_000;

/** The settings of the server and of the commands that open a database, in the order `--help` lists them. */
export const SETTINGS = {
  databaseUrl: setting({
    env: 'SECINV_DATABASE_URL',
    flag: '--db <url>',
    help: 'database: sqlite:PATH, a file path, or postgres://…',
    parse: text,
    fallback: 'sqlite:./data/secinv.db',
    demo: 'sqlite:./data/demo.db',
  }),
  /** PostgreSQL: the URL the API process logs in with (default: the database URL as user secinv_api, no password). */
  apiDatabaseUrl: setting({
    env: 'SECINV_API_DATABASE_URL',
    help: 'PostgreSQL: the URL serve logs in with',
    parse: text,
    fallback: undefined,
    shown: 'the database URL as user secinv_api',
  }),
  host: setting({
    env: 'SECINV_HOST',
    flag: '--host <host>',
    help: 'address to listen on',
    parse: text,
    fallback: '127.0.0.1',
  }),
  port: setting({
    env: 'SECINV_PORT',
    flag: '--port <port>',
    help: 'port to listen on',
    parse: port('port'),
    fallback: 8080,
  }),
  /** Serving processes on the one port (docs/DESIGN.md §112): 1 serves from this process itself, as before. */
  workers: setting({
    env: 'SECINV_WORKERS',
    flag: '--workers <n>',
    help: 'serving processes sharing the port and the database (1: this process alone serves)',
    // Named by its flag, like a port: the same message answers the flag and the variable.
    parse: (value) => {
      if (!/^\d{1,4}$/.test(value) || Number(value) < 1 || Number(value) > MAX_WORKERS)
        throw new UserError(`invalid --workers '${value}' (an integer from 1 to ${MAX_WORKERS}; env SECINV_WORKERS)`);
      return Number(value);
    },
    fallback: (_settings: object) => availableParallelism(),
    shown: 'the number of cores',
  }),
  logLevel: setting({
    env: 'SECINV_LOG_LEVEL',
    help: `${LOG_LEVELS.slice(0, -1).join(', ')} or ${LOG_LEVELS.at(-1)}`,
    parse: (value, env): LogLevel => {
      const level = value.toLowerCase();
      const known = LOG_LEVELS.find((l) => l === level);
      if (known === undefined) throw new UserError(`invalid ${env} '${level}' (one of ${LOG_LEVELS.join(', ')})`);
      return known;
    },
    fallback: level('info'),
    demo: level('warn'),
  }),
  dbPoolMax: setting({
    env: 'SECINV_DB_POOL_MAX',
    help: 'PostgreSQL: connections per process',
    parse: integer(1, 1000),
    fallback: 10,
  }),
  /** PostgreSQL: opening a connection taking longer is answered 503 (the database is unreachable or stalled). */
  dbConnectTimeoutMs: setting({
    env: 'SECINV_DB_CONNECT_TIMEOUT_MS',
    help: 'PostgreSQL: opening a connection longer than this answers 503',
    parse: integer(1, 600_000),
    fallback: 2000,
  }),
  dbQueueTimeoutMs: setting({
    env: 'SECINV_DB_QUEUE_TIMEOUT_MS',
    help: 'PostgreSQL: wait for a free connection of a busy pool before answering 503',
    parse: integer(1, 3_600_000),
    // A queued request still has to run its statements; one queued past the request timeout would be cut off unanswered.
    fallback: ({ requestTimeoutMs }: { requestTimeoutMs: number }) => Math.min(QUEUE_TIMEOUT_MS, requestTimeoutMs),
    shown: `${QUEUE_TIMEOUT_MS}, at most the request timeout`,
  }),
  dbStatementTimeoutMs: setting({
    env: 'SECINV_DB_STATEMENT_TIMEOUT_MS',
    help: 'PostgreSQL: statements running longer are cancelled (503)',
    parse: integer(1, 3_600_000),
    fallback: 10_000,
  }),
  countColumnsMaxRows: setting({
    env: 'SECINV_COUNT_COLUMNS_MAX_ROWS',
    help: 'assets whose filter columns are kept in memory to count list matches (all tenants, all --workers together; 0: count by SQL)',
    parse: integer(0, 100_000_000),
    fallback: 1_000_000,
  }),
  rateLimitPerMinute: setting({
    env: 'SECINV_RATE_LIMIT_PER_MINUTE',
    help: 'requests per minute per API key, 0 for no limit',
    parse: integer(0, 1_000_000),
    fallback: 1200,
  }),
  /** MiB of response bodies kept by ETag, compressed or not, to be sent again without building them (0: none). */
  keptBodiesMb: setting({
    env: 'SECINV_KEPT_BODIES_MB',
    help: 'memory for response bodies kept by ETag and sent again, shared out among the --workers, 0 for none',
    parse: integer(0, 65_536),
    fallback: 32,
  }),
  /** Largest scan upload, in bytes after a Content-Encoding is decoded (pipeline.md §2). */
  scanMaxBytes: setting({
    env: 'SECINV_SCAN_MAX_BYTES',
    help: 'largest scan upload accepted over HTTP, in bytes (413 beyond)',
    parse: integer(1, Number.MAX_SAFE_INTEGER),
    fallback: 1024 * 1024 * 1024,
  }),
  /** How long a server's claim on a scan lasts: a scan whose process died is taken again after this. */
  scanLeaseS: setting({
    env: 'SECINV_SCAN_LEASE_S',
    help: 'seconds after which a scan whose server process died is applied by another (or failed as interrupted)',
    parse: integer(5, 86_400),
    fallback: 120,
  }),
  /** How long a scan's record is kept once it ended: `secinv serve` deletes older ones every hour (pipeline.md §2). */
  scanRetentionDays: setting({
    env: 'SECINV_SCAN_RETENTION_DAYS',
    help: 'days a scan is listed after it ended (succeeded or failed); secinv serve deletes older ones hourly',
    parse: integer(1, 100_000),
    fallback: 400,
  }),
  /** How long a change stays in its tenant's log: `secinv serve` deletes older ones every hour (pipeline.md §4). */
  changesRetentionDays: setting({
    env: 'SECINV_CHANGES_RETENTION_DAYS',
    help: 'days a change stays in the change log (an older cursor is 410 gone); secinv serve deletes older ones hourly',
    parse: integer(1, 100_000),
    fallback: 400,
  }),
  /** How often `secinv serve` reopens the dismissals and lifts the exemptions that expired (pipeline.md §6). */
  expiryIntervalS: setting({
    env: 'SECINV_EXPIRY_INTERVAL_SECONDS',
    help: 'seconds between two runs of secinv serve that reopen expired dismissals and lift expired exemptions',
    parse: integer(1, 86_400),
    fallback: 60,
  }),
  /** Serve Prometheus metrics on this port (all addresses of `host`), without authentication. */
  metricsPort: setting({
    env: 'SECINV_METRICS_PORT',
    flag: '--metrics-port <port>',
    help: 'serve unauthenticated Prometheus metrics at /metrics on this port',
    parse: port('metrics port'),
    fallback: undefined,
  }),
  metricsToken: setting({
    env: 'SECINV_METRICS_TOKEN',
    help: `serve /metrics on the API port to this bearer token (${METRICS_TOKEN_MIN}+ characters)`,
    parse: (value, env) => {
      if (value.length < METRICS_TOKEN_MIN)
        throw new UserError(`${env} must be at least ${METRICS_TOKEN_MIN} characters`);
      return value;
    },
    fallback: undefined,
  }),
  /** PEM files: serve HTTPS instead of HTTP (both or neither). */
  tlsCert: setting({
    env: 'SECINV_TLS_CERT',
    flag: '--tls-cert <file>',
    help: 'PEM certificate, with the TLS key: serve HTTPS',
    parse: text,
    fallback: undefined,
  }),
  tlsKey: setting({
    env: 'SECINV_TLS_KEY',
    flag: '--tls-key <file>',
    help: 'PEM private key',
    parse: text,
    fallback: undefined,
  }),
  requestTimeoutMs: setting({
    env: 'SECINV_REQUEST_TIMEOUT_MS',
    help: 'a request unanswered after this long is cut off',
    parse: integer(1, 3_600_000),
    fallback: 30_000,
  }),
  /** On SIGTERM/SIGINT, the server is unready but still serving for this long, so balancers stop sending first. */
  shutdownGraceMs: setting({
    env: 'SECINV_SHUTDOWN_GRACE_MS',
    help: 'on SIGTERM/SIGINT, /readyz fails and requests are still served this long before the listener closes',
    parse: integer(0, 600_000),
    fallback: 2000,
  }),
  shutdownTimeoutMs: setting({
    env: 'SECINV_SHUTDOWN_TIMEOUT_MS',
    help: 'then in-flight requests get this long to finish',
    parse: integer(0, 3_600_000),
    fallback: 10_000,
  }),
  /** The URL clients reach the server at, for the links it hands out; undefined: taken from each request. */
  publicUrl: setting({
    env: 'SECINV_PUBLIC_URL',
    help: 'the URL clients reach this server at (behind a proxy), for the download links it hands out',
    parse: (value, env) => {
      const url = value.replace(/\/+$/, '');
      if (!/^https?:\/\/[^/?#\s]+(\/[^?#\s]*)?$/.test(url))
        throw new UserError(`invalid ${env} '${url}' (http:// or https://, a host, an optional path)`);
      return url;
    },
    fallback: undefined,
    shown: "the request's scheme and Host",
  }),
  /** Webhooks may be sent to loopback, private and link-local addresses (pipeline.md §5): for tests and closed labs. */
  webhookAllowPrivate: setting({
    env: 'SECINV_WEBHOOK_ALLOW_PRIVATE',
    help: 'true: webhooks may be sent to loopback, private, link-local and metadata addresses (refused otherwise)',
    parse: (value, env) => {
      if (value !== 'true' && value !== 'false') throw new UserError(`invalid ${env} '${value}' (true or false)`);
      return value === 'true';
    },
    fallback: false,
  }),
  /** Tests and tuning: the retry schedule (10 s, 1 min, 10 min, 1 h, then 6 h, for 3 days) scaled to this first wait. */
  webhookRetryMs: setting({
    env: 'SECINV_TEST_WEBHOOK_RETRY_MS',
    help: "tests and tuning: a webhook's first retry waits this long; the later waits and the 3-day window scale with it",
    parse: integer(1, 3_600_000),
    fallback: FIRST_RETRY_MS,
  }),
  /** Tests only: a delivery unanswered after this long failed (10 s, pipeline.md §5). */
  webhookTimeoutMs: setting({
    env: 'SECINV_TEST_WEBHOOK_TIMEOUT_MS',
    help: 'tests only: a webhook delivery not answered within this long failed; the claim on an endpoint lasts 3 times it',
    parse: integer(100, 600_000),
    fallback: 10_000,
  }),
  /** Tests only: `secinv serve`'s webhook thread kills its process once a batch is fixed, before it is sent. */
  webhookKillAt: setting({
    env: 'SECINV_TEST_WEBHOOK_KILL_AT',
    help: 'tests only: secinv serve kills itself (SIGKILL) at this point of a webhook delivery: send',
    parse: (value, env) => {
      if (value !== 'send') throw new UserError(`invalid ${env} '${value}' (send)`);
      return value;
    },
    fallback: undefined,
  }),
  /** Tests only: `secinv import` kills itself with SIGKILL on reaching this point of its run (IMPORT_POINTS). */
  importKillAt: setting({
    env: 'SECINV_TEST_IMPORT_KILL_AT',
    help: 'tests only: secinv import kills itself (SIGKILL) at this point: opened, record:N, read, settled, indexed, committed, analyzed',
    parse: (value, env) => {
      if (!IMPORT_POINTS.test(value)) throw new UserError(`invalid ${env} '${value}' (${IMPORT_POINTS.source})`);
      return value;
    },
    fallback: undefined,
  }),
  /** Tests only: a server's scan thread kills its process with SIGKILL on reaching this point of a scan. */
  scanKillAt: setting({
    env: 'SECINV_TEST_SCAN_KILL_AT',
    help: 'tests only: secinv serve kills itself (SIGKILL) at this point of a scan: queued, claimed, read, settled, committed',
    parse: (value, env) => {
      if (!SCAN_POINTS.includes(value)) throw new UserError(`invalid ${env} '${value}' (${SCAN_POINTS.join(', ')})`);
      return value;
    },
    fallback: undefined,
  }),
};

/** `queued`: once an upload was answered 202, before anything claims it; the others are points of applying a scan. */
const SCAN_POINTS = ['queued', 'claimed', 'read', 'settled', 'committed'];

/**
 * The settings of `secinv api`, which its profiles complete (loadClientSettings): a variable left empty counts as
 * unset, except SECINV_PROFILE.
 */
export const CLIENT_SETTINGS = {
  url: setting({
    env: 'SECINV_URL',
    flag: '--url <url>',
    help: `the server, e.g. http://${SETTINGS.host.fallback}:${SETTINGS.port.fallback}`,
    parse: text,
    fallback: undefined,
    shown: 'the profile',
  }),
  key: setting({
    env: 'SECINV_API_KEY',
    flag: '--key <key>',
    help: 'a tenant API key',
    parse: text,
    fallback: undefined,
    shown: 'the profile',
  }),
  profile: setting({
    env: 'SECINV_PROFILE',
    flag: '--profile <name>',
    help: 'the profile of the config file to use',
    parse: text,
    fallback: 'default',
  }),
  configFile: setting({
    env: 'SECINV_CONFIG_FILE',
    help: 'the profiles file',
    parse: text,
    fallback: undefined,
    shown: '$XDG_CONFIG_HOME/secinv/config.json or ~/.config/…',
  }),
};

type Settings = typeof SETTINGS;
type ValueOf<S> = S extends Setting<infer T, string, infer _C> ? T : never;

/** The settings as read: one field per entry of SETTINGS. */
export type Config = { [K in keyof Settings]: ValueOf<Settings[K]> };

/** `--tls-cert` is the attribute `tlsCert`, as commander names it. */
type Camel<S extends string> = S extends `${infer Head}-${infer Tail}` ? `${Head}${Capitalize<Camel<Tail>>}` : S;
type FlagKey<F> = F extends `--${infer Name} <${string}>` ? Camel<Name> : never;

/** The flags of a command that set a setting, by commander's name for them (`db`, `tlsCert`), as typed. */
export type ConfigFlags = {
  [K in keyof Settings as FlagKey<Settings[K]['flag']>]?: string | undefined;
};

/** `--tls-cert <file>` is the flag `--tls-cert`. */
export const flagName = (flag: string): string => flag.split(' ')[0] ?? flag;

/** Commander's name for a flag's value: `--tls-cert <file>` is `tlsCert`. */
const flagKey = (flag: string): string =>
  flagName(flag)
    .slice(2)
    .replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

/** Any entry of the tables: every setting's value is a string, a number or a boolean, when it has one. */
export type AnySetting = Setting<string | number | boolean | undefined, string, never>;

/** Reads every setting: a flag, else its variable, else its default (`demo`: secinv demo's). */
export function loadConfig(
  flags: ConfigFlags = {},
  env: NodeJS.ProcessEnv = process.env,
  { demo = false }: { demo?: boolean } = {},
): Readonly<Config> {
  const given: Partial<Record<string, string>> = flags;
  const values: Record<string, unknown> = {};
  const computed: [string, (settings: Record<string, unknown>) => unknown][] = [];
  for (const [name, s] of Object.entries<AnySetting>(SETTINGS)) {
    const raw = (s.flag === undefined ? undefined : given[flagKey(s.flag)]) ?? env[s.env];
    const fallback = demo && s.demo !== undefined ? s.demo : s.fallback;
    values[name] = raw === undefined ? fallback : s.parse(raw, s.env);
    // The one kind of function a fallback is: a default computed from the other settings (setting() types it).
    if (typeof values[name] === 'function') computed.push([name, fallback as (settings: object) => unknown]);
  }
  for (const [name, compute] of computed) values[name] = compute(values);
  if ((values.tlsCert === undefined) !== (values.tlsKey === undefined))
    throw new UserError(`${flagName(SETTINGS.tlsCert.flag)} and ${flagName(SETTINGS.tlsKey.flag)} go together`);
  return Object.freeze(values as Config);
}

/** A setting's default as help tells it; `demo`: the default of secinv demo. */
function shownDefault(s: AnySetting, demo = false): string {
  if (demo && s.demo !== undefined) return String(s.demo);
  if (s.shown !== undefined) return s.shown;
  return typeof s.fallback === 'function' || s.fallback === undefined ? 'none' : String(s.fallback);
}

/** The help of a setting's flag: what it is, its variable and its default (on `demo`, demo's). */
export function flagHelp(s: AnySetting, { demo = false }: { demo?: boolean } = {}): string {
  const fallback = shownDefault(s, demo);
  return `${s.help} (env ${s.env}${fallback === 'none' ? '' : `; default: ${fallback}`})`;
}

/** The environment list's line of a setting: its variable, what it is (and its flag), its default. */
const environmentLine = (s: AnySetting, scope = '') =>
  [
    s.env,
    `${scope}${s.help}${s.flag === undefined ? '' : ` (flag ${flagName(s.flag)})`}`,
    `${shownDefault(s)}${s.demo === undefined ? '' : ` (demo: ${String(s.demo)})`}`,
  ] as const;

/** Every environment variable secinv reads, with what it means and its default: `--help` lists them from here. */
export const ENVIRONMENT = [
  ...Object.values<AnySetting>(SETTINGS).map((s) => environmentLine(s)),
  ...Object.values<AnySetting>(CLIENT_SETTINGS).map((s) => environmentLine(s, 'secinv api: ')),
];

/** The environment variables as a help section. */
export function environmentHelp(): string {
  const width = Math.max(...ENVIRONMENT.map(([name]) => name.length));
  return `\nEnvironment variables (flags take precedence):\n${ENVIRONMENT.map(([name, meaning, fallback]) => `  ${name.padEnd(width)}  ${meaning} (default: ${fallback})`).join('\n')}\n`;
}

/** Where `secinv api` finds the server and the key: the flags, the environment and the profiles file. */
export interface ClientSettings {
  /** --url and --key. */
  flags: { url: string | undefined; key: string | undefined };
  /** SECINV_URL and SECINV_API_KEY. */
  env: { url: string | undefined; key: string | undefined };
  /** The profile to read: named by --profile or SECINV_PROFILE (`explicit`), else `default`. */
  profile: string;
  explicitProfile: boolean;
  configFile: string;
}

export function loadClientSettings(
  flags: { url?: string | undefined; key?: string | undefined; profile?: string | undefined },
  env: NodeJS.ProcessEnv = process.env,
): ClientSettings {
  const { url, key, profile: named, configFile } = CLIENT_SETTINGS;
  const profile = flags.profile ?? env[named.env];
  const configHome = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), '.config');
  return {
    flags: { url: flags.url, key: flags.key },
    env: { url: env[url.env] || undefined, key: env[key.env] || undefined },
    profile: profile ?? named.fallback,
    explicitProfile: profile !== undefined,
    configFile: env[configFile.env] || join(configHome, 'secinv', 'config.json'),
  };
}

/** Connection settings of the API process (PostgreSQL role, pool and timeouts). */
export const apiConnectOptions = (config: Readonly<Config>, onConnectionError?: (error: Error) => void) => ({
  role: 'api' as const,
  apiUrl: config.apiDatabaseUrl,
  poolMax: config.dbPoolMax,
  connectTimeoutMs: config.dbConnectTimeoutMs,
  queueTimeoutMs: config.dbQueueTimeoutMs,
  statementTimeoutMs: config.dbStatementTimeoutMs,
  countColumnsMaxRows: config.countColumnsMaxRows,
  // A request never copies a scan's pages into the file: the server's scan runner does, while idle (DESIGN §118).
  checkpointAtCommit: false,
  ...(onConnectionError ? { onConnectionError } : {}),
});
