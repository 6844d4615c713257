// The PostgreSQL role the tests create and drop their databases with; shared by test/helpers.ts and
// test/global-setup.ts (which must not import vitest, as helpers.ts does).
import pg from 'pg';

/** A PostgreSQL role that may create databases; each test file gets its own database, dropped afterwards. */
export const POSTGRES_ADMIN_URL = process.env.SECINV_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export async function adminQuery(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}
