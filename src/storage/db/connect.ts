// Opens a database of either dialect and brings its schema to the latest migration (or verifies it is there).
import { existsSync } from 'node:fs';
import { Migrator, sql } from 'kysely';
import { UserError } from '../../domain/errors.js';
import {
  defaultConnectOptions,
  FROM_FLAG,
  NoInventoryError,
  reasonOf,
  type ConnectOptions,
  type Connection,
} from './connection.js';
import { migrations } from './migrations/index.js';
import { apiRoleUrl, ensureDatabase, loadPg, openPostgres } from './postgres.js';
import { API_ROLE } from './roles.js';
import { openSqlite } from './sqlite.js';
import { displayDatabaseUrl, parseDatabaseUrl } from './url.js';

export async function connect(url: string, options: ConnectOptions = defaultConnectOptions): Promise<Connection> {
  const location = parseDatabaseUrl(url);
  if (location.dialect === 'sqlite') {
    if (options.migrations === 'verify' && location.path !== ':memory:' && !existsSync(location.path)) {
      throw new NoInventoryError(`the database ${displayDatabaseUrl(url)} does not exist`);
    }
    const connection = await openSqlite(location.path, options);
    try {
      await migrateOrClose(connection, options);
    } catch (error) {
      if (error instanceof UserError) throw error;
      // A file that is not a database, or one that cannot be written (read-only file or folder), fails here.
      throw new UserError(`cannot open the SQLite database ${location.path} ${FROM_FLAG}: ${reasonOf(error)}`);
    }
    return connection;
  }
  await loadPg();
  // Migrations run as the connecting user, before any connection takes the API role.
  try {
    if (options.migrations !== 'verify') await ensureDatabase(location.url, options);
    const migrator = openPostgres(location.url, { ...options, role: 'admin', poolMax: 1 });
    await migrateOrClose(migrator, options);
    await migrator.db.destroy();
  } catch (error) {
    if (error instanceof UserError) throw error;
    if ((error as { code?: unknown }).code === '3D000')
      throw new NoInventoryError(`the database ${displayDatabaseUrl(url)} does not exist`);
    throw new UserError(
      `cannot open the PostgreSQL database ${displayDatabaseUrl(url)} ${FROM_FLAG}: ${reasonOf(error)}`,
    );
  }
  if (options.role === 'admin') return openPostgres(location.url, options);
  const connection = openPostgres(options.apiUrl ?? apiRoleUrl(location.url), options);
  // Fail closed: refuse to serve unless the connections really log in as the role row-level security constrains.
  const { rows } = await sql<{ user: string }>`select session_user as "user"`
    .execute(connection.db)
    .catch(async (error: unknown) => {
      await connection.db.destroy();
      throw new UserError(
        `cannot connect as the database role ${API_ROLE}: ${(error as Error).message} (see docs/SCALING.md)`,
      );
    });
  if (rows[0]?.user !== API_ROLE) {
    await connection.db.destroy();
    throw new UserError(
      `the API must connect as the database role ${API_ROLE}, not ${rows[0]?.user ?? 'nobody'} (see docs/SCALING.md)`,
    );
  }
  return connection;
}

async function migrateOrClose(connection: Connection, options: ConnectOptions): Promise<void> {
  try {
    await migrate(connection, options.migrations ?? 'apply');
  } catch (error) {
    await connection.db.destroy();
    throw error;
  }
}

async function migrate({ db, dialect }: Connection, mode: 'apply' | 'verify'): Promise<void> {
  const names = Object.keys(await migrations(dialect).getMigrations());
  const recorded = await recordedMigrations(db);
  const pending = recorded === null ? names : names.filter((name) => !recorded.has(name));
  if (mode === 'verify') {
    // Reads only: without a migration table (an empty database) every migration is pending.
    if (pending.length === names.length) throw new NoInventoryError('the database holds no inventory yet');
    if (pending.length > 0) {
      throw new UserError(
        'the database schema is older than this version of secinv; run the command once without --dry-run to upgrade it',
      );
    }
    return;
  }
  // Up to date, as nearly every open finds it: one read instead of the migrator's table checks and lock (each of its
  // checks lists every table and column). A database that records migrations this version does not know goes to the
  // migrator, which refuses it.
  if (pending.length === 0 && recorded?.size === names.length) return;
  const migrator = new Migrator({ db, provider: migrations(dialect) });
  for (let attempt = 1; ; attempt += 1) {
    const { error } = await migrator.migrateToLatest();
    if (!error) return;
    // Databases of one PostgreSQL cluster share its roles: two of them migrated at once both alter the API role
    // (0002) and the first holds the updated row until its whole migration commits, so PostgreSQL fails the other
    // with "tuple concurrently updated". That migration rolled back whole, so it runs again after a random wait that
    // grows with each attempt (of eight databases opened at once, one per round got through when the waits were short and equal).
    if (attempt < MIGRATION_ATTEMPTS && concurrentCatalogUpdate(error)) {
      await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(2000, 100 * 2 ** attempt)));
      continue;
    }
    throw error instanceof Error ? error : new Error(`migration failed: ${JSON.stringify(error)}`);
  }
}

const MIGRATION_ATTEMPTS = 12;

/** The migrations the database records as run (Kysely's table), or null when it has no such table yet. */
async function recordedMigrations(db: Connection['db']): Promise<Set<string> | null> {
  try {
    const { rows } = await sql<{ name: string }>`select name from kysely_migration`.execute(db);
    return new Set(rows.map((row) => row.name));
  } catch (error) {
    const missing =
      (error as { code?: unknown }).code === '42P01' || /no such table: kysely_migration/.test(String(error));
    if (missing) return null;
    throw error;
  }
}

const concurrentCatalogUpdate = (error: unknown): boolean =>
  (error as { code?: unknown }).code === 'XX000' && /tuple concurrently updated/.test(String(error));
