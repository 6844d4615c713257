// The generated tenant the feeds and risks benchmarks run on, imported through `secinv import`'s code path into a
// database of its own: on SQLite a copy of one kept under data/ (git-ignored, as for `npm run bench`), because the
// import takes minutes and the benchmarks change the database; on PostgreSQL a new database per run.
import { copyFileSync, existsSync, mkdirSync, rmSync, renameSync } from 'node:fs';
import { closeSync, fsyncSync, openSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import type { GenerateOptions } from '../src/generate/generator.js';
import { summaryLine } from '../src/import/importer.js';
import { importGenerated } from './import.js';
import { openStorage } from '../src/storage/index.js';
import type { Storage } from '../src/storage/types.js';

/** The benchmarks' options: one tenant of `assets` assets, `findingsPerAsset` findings each, no imported risks. */
export const benchOptions = (assets: string | undefined, findingsPerAsset: string | undefined): GenerateOptions => ({
  seed: 'bench',
  tenants: 1,
  assets: Number(assets),
  findingsPerAsset: Number(findingsPerAsset),
  risks: 0,
});

export interface TenantDatabase {
  /** 'sqlite' or 'postgres'. */
  db: string;
  options: GenerateOptions;
  /** Names the kept SQLite file and the PostgreSQL database: one per benchmark whose `prepare` differs. */
  name: string;
  /** Runs on the empty database before the import (e.g. loads a feed while no tenant would derive risks from it). */
  prepare?: (storage: Storage) => Promise<void>;
  /**
   * PostgreSQL, for benchmarks that only read: keep the imported database (named by `name` and the sizes) and reuse
   * it on the next run, as SQLite's file under data/ is (the 1M-finding import takes half an hour there).
   */
  keep?: boolean;
}

/** Imports the generated tenant as `secinv generate > FILE; secinv import FILE` would. */
async function build(url: string, spec: TenantDatabase): Promise<void> {
  const storage = await openStorage(url);
  try {
    await spec.prepare?.(storage);
    const result = await importGenerated(storage, spec.options);
    if (result.problemCount > 0) throw new Error(`import failed: ${JSON.stringify(result.problems.slice(0, 3))}`);
    process.stdout.write(`${summaryLine(result, false)} in ${result.seconds.toFixed(0)} s\n`);
  } finally {
    await storage.close();
  }
}

const adminQuery = async (admin: string, text: string): Promise<void> => {
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  await client.query(text).finally(() => client.end());
};

/** A database holding the generated tenant, under `dir` on SQLite; `drop` removes it. */
export async function tenantDatabase(
  dir: string,
  spec: TenantDatabase,
): Promise<{ url: string; drop: () => Promise<void> }> {
  if (spec.db === 'sqlite') {
    const base = `data/bench-${spec.name}-${spec.options.assets}-${spec.options.findingsPerAsset}.db`;
    if (!existsSync(base)) {
      mkdirSync('data', { recursive: true });
      for (const suffix of ['', '-wal', '-shm']) rmSync(`${base}.partial${suffix}`, { force: true });
      await build(`sqlite:${base}.partial`, spec);
      renameSync(`${base}.partial`, base);
    } else process.stdout.write(`reusing ${base} (delete it to import again)\n`);
    const copy = join(dir, 'bench.db');
    copyFileSync(base, copy);
    // Flushed now, so that writing back the 6 GB copy does not compete with the measured commits for the disk.
    const fd = openSync(copy, 'r+');
    fsyncSync(fd);
    closeSync(fd);
    return { url: `sqlite:${copy}`, drop: async () => undefined };
  }
  const admin = process.env.SECINV_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  if (spec.keep === true) return keptPostgres(admin, spec);
  const name = `secinv_bench_${spec.name.replace(/\W/g, '_')}_${process.pid}`;
  const url = new URL(admin);
  url.pathname = `/${name}`;
  const drop = () => adminQuery(admin, `drop database if exists ${name} with (force)`);
  await adminQuery(admin, `create database ${name}`);
  await build(url.toString(), spec).catch(async (error: unknown) => {
    await drop();
    throw error;
  });
  return { url: url.toString(), drop };
}

/** A PostgreSQL tenant database kept between runs: imported under a partial name, renamed once complete. */
async function keptPostgres(admin: string, spec: TenantDatabase): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `secinv_bench_${spec.name.replace(/\W/g, '_')}_${spec.options.assets}_${spec.options.findingsPerAsset}`;
  const urlOf = (database: string) => {
    const url = new URL(admin);
    url.pathname = `/${database}`;
    return url.toString();
  };
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  const exists = await client.query('select 1 from pg_database where datname = $1', [name]).finally(() => client.end());
  if (exists.rowCount === 1) {
    process.stdout.write(`reusing the database ${name} (drop it to import again)\n`);
    return { url: urlOf(name), drop: async () => undefined };
  }
  await adminQuery(admin, `drop database if exists ${name}_partial with (force)`);
  await adminQuery(admin, `create database ${name}_partial`);
  await build(urlOf(`${name}_partial`), spec);
  await adminQuery(admin, `alter database ${name}_partial rename to ${name}`);
  return { url: urlOf(name), drop: async () => undefined };
}
