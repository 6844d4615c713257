// The only reader of process.env. Settings are validated once, frozen, and passed down; CLI flags override them.
import { UserError } from './errors.js';

export interface Config {
  databaseUrl: string;
  host: string;
  port: number;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
}

export const DEFAULT_DATABASE_URL = 'sqlite:./data/secinv.db';
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export interface ConfigOverrides {
  db?: string | undefined;
  host?: string | undefined;
  port?: string | undefined;
  /** The database when neither --db nor SECINV_DATABASE_URL names one (demo uses its own file). */
  defaultDb?: string | undefined;
  /** The log level when SECINV_LOG_LEVEL is unset (demo keeps its terminal readable). */
  defaultLogLevel?: Config['logLevel'] | undefined;
}

export function loadConfig(overrides: ConfigOverrides = {}, env: NodeJS.ProcessEnv = process.env): Readonly<Config> {
  const port = overrides.port ?? env.SECINV_PORT ?? '8080';
  if (!/^\d{1,5}$/.test(port) || Number(port) > 65535) throw new UserError(`invalid port '${port}' (0 to 65535)`);
  const logLevel = (env.SECINV_LOG_LEVEL ?? overrides.defaultLogLevel ?? 'info').toLowerCase();
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) throw new UserError(`invalid SECINV_LOG_LEVEL '${logLevel}' (one of ${LOG_LEVELS.join(', ')})`);
  return Object.freeze({
    databaseUrl: overrides.db ?? env.SECINV_DATABASE_URL ?? overrides.defaultDb ?? DEFAULT_DATABASE_URL,
    host: overrides.host ?? env.SECINV_HOST ?? '127.0.0.1',
    port: Number(port),
    logLevel: logLevel as Config['logLevel'],
  });
}
