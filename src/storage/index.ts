// The storage interface: everything the API, the importer and the CLI may ask of the database. Implemented once with
// Kysely for SQLite and PostgreSQL; nothing outside src/storage/ sees SQL.
import { sql } from 'kysely';
import { assetStore } from './assets.js';
import { connect } from './connect.js';
import { sqlDialects, type Dialect } from './dialect.js';
import { ingestWriter, type IngestWriter } from './ingest.js';
import { keyStore } from './keys.js';

export type { TenantScope } from './scope.js';
export type { KeyInfo, AuthenticatedKey } from './keys.js';
export type { IngestWriter } from './ingest.js';
export { parseDatabaseUrl } from './connect.js';

/** Thrown inside an ingest to roll it back without an error (dry runs). */
const ROLLBACK = Symbol('rollback');

export async function openStorage(url: string) {
  const { db, dialect } = await connect(url);
  const keys = keyStore(db);
  const assets = assetStore(db, sqlDialects[dialect]);

  return {
    dialect: dialect as Dialect,
    ...keys,
    ...assets,

    /**
     * Runs an import in one transaction: all of it is written, or (when `work` throws, or on a dry run) none of it.
     */
    async ingest<T>(work: (writer: IngestWriter) => Promise<T>, options: { dryRun: boolean }): Promise<T> {
      let result: T | undefined;
      try {
        await db.transaction().execute(async (tx) => {
          const writer = ingestWriter(tx);
          result = await work(writer);
          if (options.dryRun) throw ROLLBACK;
          await writer.finish();
        });
      } catch (error) {
        if (error !== ROLLBACK) throw error;
        return result as T;
      }
      // Fresh planner statistics after bulk changes, so filters and sorts pick their indexes. SQLite samples a bounded
      // number of rows per index (fast on any size); PostgreSQL samples by default.
      if (dialect === 'sqlite') await sql`pragma analysis_limit = 1000`.execute(db);
      await sql`analyze`.execute(db);
      return result as T;
    },

    async ping(): Promise<void> {
      await sql`select 1`.execute(db);
    },

    async close(): Promise<void> {
      await db.destroy();
    },
  };
}

export type Storage = Awaited<ReturnType<typeof openStorage>>;
