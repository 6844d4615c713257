// The only reader of process.env. Settings are validated once, frozen, and passed down; CLI flags override them.
import { homedir } from 'node:os';
import { join } from 'node:path';
import { UserError } from './domain/errors.js';

export interface Config {
  databaseUrl: string;
  /** PostgreSQL: the URL the API process logs in with (default: the database URL as user secinv_api, no password). */
  apiDatabaseUrl: string | undefined;
  host: string;
  port: number;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** PostgreSQL: connections per process. */
  dbPoolMax: number;
  /** PostgreSQL: opening a connection taking longer is answered 503 (the database is unreachable or stalled). */
  dbConnectTimeoutMs: number;
  /** PostgreSQL: how long a request waits for a free connection of a busy pool before it is answered 503. */
  dbQueueTimeoutMs: number;
  /** PostgreSQL: statements of the API running longer are cancelled and answered 503. */
  dbStatementTimeoutMs: number;
  countColumnsMaxRows: number;
  /** Requests per minute per API key (0: no limit). */
  rateLimitPerMinute: number;
  /** MiB of response bodies kept by ETag, compressed or not, to be sent again without building them (0: none). */
  keptBodiesMb: number;
  /** Serve Prometheus metrics on this port (all addresses of `host`), without authentication. */
  metricsPort: number | undefined;
  /** Serve Prometheus metrics at /metrics on the API port to requests bearing this token. */
  metricsToken: string | undefined;
  /** PEM files: serve HTTPS instead of HTTP. */
  tlsCert: string | undefined;
  tlsKey: string | undefined;
  /** A request still unanswered after this long is cut off. */
  requestTimeoutMs: number;
  /** On SIGTERM/SIGINT, the server is unready but still serving for this long, so balancers stop sending first. */
  shutdownGraceMs: number;
  /** Then in-flight requests get this long to finish before connections are closed. */
  shutdownTimeoutMs: number;
  /** The URL clients reach the server at, for the links it hands out; undefined: taken from each request. */
  publicUrl: string | undefined;
  /** Tests only: `secinv import` kills itself with SIGKILL on reaching this point of its run (IMPORT_POINTS). */
  importKillAt: string | undefined;
}

/** The points of an import run a test may kill it at: `record:N` is just after the Nth record was handed over. */
export const IMPORT_POINTS = /^(opened|record:[1-9]\d*|read|settled|indexed|committed|analyzed)$/;

export const DEFAULT_DATABASE_URL = 'sqlite:./data/secinv.db';

/** Every environment variable secinv reads, with what it means and its default: `--help` lists them from here. */
export const ENVIRONMENT = [
  ['SECINV_DATABASE_URL', 'database: sqlite:PATH, a file path, or postgres://… (flag --db)', DEFAULT_DATABASE_URL],
  ['SECINV_API_DATABASE_URL', 'PostgreSQL: the URL serve logs in with', 'the database URL as user secinv_api'],
  ['SECINV_HOST', 'address to listen on (flag --host)', '127.0.0.1'],
  ['SECINV_PORT', 'port to listen on (flag --port)', '8080'],
  ['SECINV_LOG_LEVEL', 'fatal, error, warn, info, debug, trace or silent', 'info (demo: warn)'],
  ['SECINV_DB_POOL_MAX', 'PostgreSQL: connections per process', '10'],
  ['SECINV_DB_CONNECT_TIMEOUT_MS', 'PostgreSQL: opening a connection longer than this answers 503', '2000'],
  [
    'SECINV_DB_QUEUE_TIMEOUT_MS',
    'PostgreSQL: wait for a free connection of a busy pool before answering 503',
    '20000, at most the request timeout',
  ],
  ['SECINV_DB_STATEMENT_TIMEOUT_MS', 'PostgreSQL: statements running longer are cancelled (503)', '10000'],
  [
    'SECINV_COUNT_COLUMNS_MAX_ROWS',
    'assets whose filter columns are kept in memory to count list matches (all tenants; 0: count by SQL)',
    '1000000',
  ],
  ['SECINV_RATE_LIMIT_PER_MINUTE', 'requests per minute per API key, 0 for no limit', '1200'],
  ['SECINV_KEPT_BODIES_MB', 'memory for response bodies kept by ETag and sent again, 0 for none', '32'],
  ['SECINV_METRICS_PORT', 'serve unauthenticated Prometheus metrics on this port (flag --metrics-port)', 'none'],
  ['SECINV_METRICS_TOKEN', 'serve /metrics on the API port to this bearer token (16+ characters)', 'none'],
  ['SECINV_TLS_CERT', 'PEM certificate: serve HTTPS (flag --tls-cert, with SECINV_TLS_KEY)', 'none'],
  ['SECINV_TLS_KEY', 'PEM private key (flag --tls-key)', 'none'],
  ['SECINV_REQUEST_TIMEOUT_MS', 'a request unanswered after this long is cut off', '30000'],
  [
    'SECINV_SHUTDOWN_GRACE_MS',
    'on SIGTERM/SIGINT, /readyz fails and requests are still served this long before the listener closes',
    '2000',
  ],
  ['SECINV_SHUTDOWN_TIMEOUT_MS', 'then in-flight requests get this long to finish', '10000'],
  [
    'SECINV_PUBLIC_URL',
    'the URL clients reach this server at (behind a proxy), for the download links it hands out',
    "the request's scheme and Host",
  ],
  [
    'SECINV_TEST_IMPORT_KILL_AT',
    'tests only: secinv import kills itself (SIGKILL) at this point: opened, record:N, read, settled, indexed, committed, analyzed',
    'none',
  ],
  ['SECINV_URL', 'secinv api: the server (flag --url)', 'the profile'],
  ['SECINV_API_KEY', 'secinv api: the tenant API key (flag --key)', 'the profile'],
  ['SECINV_PROFILE', 'secinv api: the profile of the config file to use (flag --profile)', 'default'],
  ['SECINV_CONFIG_FILE', 'secinv api: the profiles file', '$XDG_CONFIG_HOME/secinv/config.json or ~/.config/…'],
] as const;

/** The environment variables as a help section. */
export function environmentHelp(): string {
  const width = Math.max(...ENVIRONMENT.map(([name]) => name.length));
  return `\nEnvironment variables (flags take precedence):\n${ENVIRONMENT.map(([name, meaning, fallback]) => `  ${name.padEnd(width)}  ${meaning} (default: ${fallback})`).join('\n')}\n`;
}
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export interface ConfigOverrides {
  db?: string | undefined;
  host?: string | undefined;
  port?: string | undefined;
  /** The database when neither --db nor SECINV_DATABASE_URL names one (demo uses its own file). */
  defaultDb?: string | undefined;
  /** The log level when SECINV_LOG_LEVEL is unset (demo keeps its terminal readable). */
  defaultLogLevel?: Config['logLevel'] | undefined;
  metricsPort?: string | undefined;
  tlsCert?: string | undefined;
  tlsKey?: string | undefined;
}

export function loadConfig(overrides: ConfigOverrides = {}, env: NodeJS.ProcessEnv = process.env): Readonly<Config> {
  const port = overrides.port ?? env.SECINV_PORT ?? '8080';
  if (!/^\d{1,5}$/.test(port) || Number(port) > 65535) throw new UserError(`invalid port '${port}' (0 to 65535)`);
  const logLevel = (env.SECINV_LOG_LEVEL ?? overrides.defaultLogLevel ?? 'info').toLowerCase();
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel))
    throw new UserError(`invalid SECINV_LOG_LEVEL '${logLevel}' (one of ${LOG_LEVELS.join(', ')})`);
  const integer = (name: string, fallback: number, min: number, max: number): number => {
    const text = env[name];
    if (text === undefined) return fallback;
    if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > max)
      throw new UserError(`invalid ${name} '${text}' (an integer from ${min} to ${max})`);
    return Number(text);
  };
  const requestTimeoutMs = integer('SECINV_REQUEST_TIMEOUT_MS', 30_000, 1, 3_600_000);
  const metricsPort = overrides.metricsPort ?? env.SECINV_METRICS_PORT;
  if (metricsPort !== undefined && (!/^\d{1,5}$/.test(metricsPort) || Number(metricsPort) > 65535))
    throw new UserError(`invalid metrics port '${metricsPort}' (0 to 65535)`);
  const tlsCert = overrides.tlsCert ?? env.SECINV_TLS_CERT;
  const tlsKey = overrides.tlsKey ?? env.SECINV_TLS_KEY;
  if ((tlsCert === undefined) !== (tlsKey === undefined)) throw new UserError('--tls-cert and --tls-key go together');
  const publicUrl = env.SECINV_PUBLIC_URL?.replace(/\/+$/, '');
  if (publicUrl !== undefined && !/^https?:\/\/[^/?#\s]+(\/[^?#\s]*)?$/.test(publicUrl))
    throw new UserError(`invalid SECINV_PUBLIC_URL '${publicUrl}' (http:// or https://, a host, an optional path)`);
  const metricsToken = env.SECINV_METRICS_TOKEN;
  if (metricsToken !== undefined && metricsToken.length < 16)
    throw new UserError('SECINV_METRICS_TOKEN must be at least 16 characters');
  const importKillAt = env.SECINV_TEST_IMPORT_KILL_AT;
  if (importKillAt !== undefined && !IMPORT_POINTS.test(importKillAt))
    throw new UserError(`invalid SECINV_TEST_IMPORT_KILL_AT '${importKillAt}' (${IMPORT_POINTS.source})`);
  return Object.freeze({
    databaseUrl: overrides.db ?? env.SECINV_DATABASE_URL ?? overrides.defaultDb ?? DEFAULT_DATABASE_URL,
    apiDatabaseUrl: env.SECINV_API_DATABASE_URL,
    host: overrides.host ?? env.SECINV_HOST ?? '127.0.0.1',
    port: Number(port),
    logLevel: logLevel as Config['logLevel'],
    dbPoolMax: integer('SECINV_DB_POOL_MAX', 10, 1, 1000),
    dbConnectTimeoutMs: integer('SECINV_DB_CONNECT_TIMEOUT_MS', 2000, 1, 600_000),
    // A queued request still has to run its statements; one queued past the request timeout would be cut off unanswered.
    dbQueueTimeoutMs: integer('SECINV_DB_QUEUE_TIMEOUT_MS', Math.min(20_000, requestTimeoutMs), 1, 3_600_000),
    dbStatementTimeoutMs: integer('SECINV_DB_STATEMENT_TIMEOUT_MS', 10_000, 1, 3_600_000),
    countColumnsMaxRows: integer('SECINV_COUNT_COLUMNS_MAX_ROWS', 1_000_000, 0, 100_000_000),
    rateLimitPerMinute: integer('SECINV_RATE_LIMIT_PER_MINUTE', 1200, 0, 1_000_000),
    keptBodiesMb: integer('SECINV_KEPT_BODIES_MB', 32, 0, 65_536),
    metricsPort: metricsPort === undefined ? undefined : Number(metricsPort),
    metricsToken,
    tlsCert,
    tlsKey,
    requestTimeoutMs,
    shutdownGraceMs: integer('SECINV_SHUTDOWN_GRACE_MS', 2000, 0, 600_000),
    shutdownTimeoutMs: integer('SECINV_SHUTDOWN_TIMEOUT_MS', 10_000, 0, 3_600_000),
    publicUrl,
    importKillAt,
  });
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
  const profile = flags.profile ?? env.SECINV_PROFILE;
  const configHome = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), '.config');
  return {
    flags: { url: flags.url, key: flags.key },
    env: { url: env.SECINV_URL || undefined, key: env.SECINV_API_KEY || undefined },
    profile: profile ?? 'default',
    explicitProfile: profile !== undefined,
    configFile: env.SECINV_CONFIG_FILE || join(configHome, 'secinv', 'config.json'),
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
  ...(onConnectionError ? { onConnectionError } : {}),
});
