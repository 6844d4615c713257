// Database URLs, apart from the code that opens them: the command line reads them before it loads any database
// library (src/cli/memory.ts).
import { resolve } from 'node:path';
import { UserError } from '../../domain/errors.js';

export type DatabaseLocation = { dialect: 'sqlite'; path: string } | { dialect: 'postgres'; url: string };

/** `sqlite:PATH`, a bare file path, or `postgres://…` / `postgresql://…`. */
export function parseDatabaseUrl(url: string): DatabaseLocation {
  if (/^postgres(ql)?:\/\//i.test(url)) return { dialect: 'postgres', url };
  const path = url.startsWith('sqlite:') ? url.slice('sqlite:'.length) : url;
  if (path === '') throw new UserError(`invalid database URL '${url}': no file path`);
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(path))
    throw new UserError(`unsupported database URL '${url}' (use sqlite:PATH or postgres://…)`);
  return { dialect: 'sqlite', path: path === ':memory:' ? path : resolve(path) };
}

/** The database as people should see it: a SQLite file by its absolute path, a PostgreSQL URL without its password. */
export function displayDatabaseUrl(url: string): string {
  const location = parseDatabaseUrl(url);
  if (location.dialect === 'sqlite') return `sqlite:${location.path}`;
  const parsed = new URL(location.url);
  if (parsed.password !== '') parsed.password = '***';
  return parsed.toString();
}
