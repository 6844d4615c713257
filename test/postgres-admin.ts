// The PostgreSQL role the tests create and drop their databases with; shared by test/helpers.ts and
// test/global-setup.ts (which must not import vitest, as helpers.ts does).
import pg from 'pg';

/** A PostgreSQL role that may create databases; each test file gets its own database, dropped at the end of the run. */
export const POSTGRES_ADMIN_URL = process.env.SECINV_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** The URL of database `name` of the cluster, for the same role. */
export function databaseUrl(name: string): string {
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Runs one statement on its own connection to `url` (the admin database by default); its rows. */
export async function adminQuery(text: string, url = POSTGRES_ADMIN_URL): Promise<Record<string, unknown>[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text)).rows as Record<string, unknown>[];
  } finally {
    await client.end();
  }
}

/** The name every test database of this run starts with (test/helpers.ts): the run's worker threads share its pid. */
export const testDatabasePrefix = (): string => `secinv_test_${process.pid}_`;
