// The PostgreSQL role the tests create and drop their databases with; shared by test/helpers.ts and
// test/global-setup.ts (which must not import vitest, as helpers.ts does).
import pg from 'pg';

/** A PostgreSQL role that may create databases; each test file gets its own database, dropped afterwards. */
export const POSTGRES_ADMIN_URL = process.env.SECINV_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** The URL of database `name` of the cluster, for the same role. */
export function databaseUrl(name: string): string {
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Runs one statement on its own connection to `url` (the admin database by default). */
export async function adminQuery(text: string, url = POSTGRES_ADMIN_URL): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}
