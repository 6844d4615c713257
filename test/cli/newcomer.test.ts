// What a newcomer meets first: which database a command opened, databases that cannot be opened, standard input
// given twice, and dry runs that write nothing. Commands that could hang run as real processes under a kill timeout.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { displayDatabaseUrl } from '../../src/storage/index.js';
import { createTestDatabase, TENANT_A, TEST_DIALECT } from '../helpers.js';
import { assetRecord, ndjsonLine } from '../records.js';
import { runCli, writeTenantFile } from './run.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** The CLI as a process, bundled as the build bundles it (test/global-setup.ts); killed after 20 s so a hang fails the test instead of stalling it. */
function spawnCli(
  args: string[],
  cwd = root,
): { code: number | null; signal: NodeJS.Signals | null; stderr: string; ms: number } {
  const started = Date.now();
  const result = spawnSync(process.execPath, [inject('cliBundle'), ...args], {
    cwd,
    encoding: 'utf8',
    timeout: 20_000,
    input: '',
  });
  return { code: result.status, signal: result.signal, stderr: result.stderr, ms: Date.now() - started };
}

let dir: string;
let db: string;
let drop: () => Promise<void>;
beforeEach(async () => {
  ({ url: db, dir, drop } = await createTestDatabase());
});
afterEach(async () => drop());

const tenantFile = () => writeTenantFile(dir);

describe('output to a reader that goes away', () => {
  it.skipIf(TEST_DIALECT !== 'sqlite')(
    'help piped into a command that exits at once ends quietly, status 0, no trace',
    () => {
      // `true` exits before the CLI has started, so the CLI's first write meets a closed pipe (EPIPE).
      const result = spawnSync(
        'bash',
        ['-c', 'set -o pipefail; "$0" "$1" --help | true', process.execPath, inject('cliBundle')],
        { cwd: root, encoding: 'utf8', timeout: 20_000 },
      );
      expect(result.stderr).toBe('');
      expect(result.status).toBe(0);
    },
  );
});

describe('which database', () => {
  it('every command that opens a database names it on stderr', async () => {
    const line = `secinv: database ${displayDatabaseUrl(db)}\n`;
    expect((await runCli('import', '--db', db, tenantFile())).stderr).toContain(line);
    const created = await runCli('keys', 'create', '--tenant', TENANT_A, '--db', db);
    expect(created.stderr).toContain(line);
    expect(created.stdout).toMatch(/^secinv_\S+\n$/);
    expect((await runCli('keys', 'list', '--tenant', TENANT_A, '--db', db)).stderr).toContain(line);
    expect((await runCli('keys', 'revoke', 'key_none', '--db', db)).stderr).toContain(line);
  });

  /** Runs `secinv demo` until it serves: what it wrote on stdout and stderr. */
  const demo = async (): Promise<{ stdout: string; stderr: string }> => {
    const child = spawn(process.execPath, [inject('cliBundle'), 'demo', '--db', db, '--port', '0'], { cwd: root });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    try {
      const stdout = await new Promise<string>((resolve, reject) => {
        let text = '';
        const timer = setTimeout(() => reject(new Error(`no serve line within 110 s:\n${text}${stderr}`)), 110_000);
        child.stdout.on('data', (chunk: Buffer) => {
          text += chunk.toString();
          if (text.includes('Press Ctrl+C')) {
            clearTimeout(timer);
            resolve(text);
          }
        });
        child.once('exit', (code) => reject(new Error(`demo exited ${code}:\n${text}${stderr}`)));
      });
      return { stdout, stderr };
    } finally {
      child.kill('SIGTERM');
    }
  };

  it.skipIf(TEST_DIALECT !== 'sqlite')('demo prints the line that serves its data again', async () => {
    expect((await runCli('import', '--db', db, tenantFile())).code).toBe(0);
    const output = (await demo()).stdout;
    expect(output).toContain(`To serve this data again: npx secinv serve --db ${displayDatabaseUrl(db)}\n`);
    // The console's address, next to the curl lines of each tenant.
    expect(output).toMatch(/^Console: http:\/\/127\.0\.0\.1:\d+\/console\/ /m);
    expect(output).toMatch(/^ {2}console: http:\/\/127\.0\.0\.1:\d+\/console\/ \(sign in with this KEY\)$/m);
  });

  it.skipIf(TEST_DIALECT !== 'sqlite')(
    'demo on an empty database generates its inventory and a key per tenant',
    async () => {
      const { stdout, stderr } = await demo();
      expect(stderr).toMatch(/^secinv: imported: 2 tenants, .* 5000 assets, \d+ vulnerabilities, 1200 risks/m);
      expect(stdout.match(/^ {2}KEY=secinv_\S+$/gm)).toHaveLength(2);
    },
    // The demo generates and imports 5,000 assets in a process of its own: 11-17 s alone, more beside other files.
    120_000,
  );

  it('a PostgreSQL URL is shown without its password, a SQLite path as an absolute path', () => {
    expect(displayDatabaseUrl('postgres://alice:s3cret@db.internal:5432/inv')).toBe(
      'postgres://alice:***@db.internal:5432/inv',
    );
    expect(displayDatabaseUrl('postgres://alice@db.internal/inv')).toBe('postgres://alice@db.internal/inv');
    expect(displayDatabaseUrl('data/x.db')).toBe(`sqlite:${join(process.cwd(), 'data/x.db')}`);
  });
});

describe.skipIf(TEST_DIALECT !== 'sqlite')('databases that cannot be opened', () => {
  const refuses = (args: string[], reason: RegExp) => {
    const result = spawnCli(args);
    expect(result.signal, `${args.join(' ')} did not finish`).toBeNull();
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^secinv: cannot open the SQLite database \S+ \(given by --db or SECINV_DATABASE_URL\): /,
    );
    expect(result.stderr).toMatch(reason);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    // Node startup and tsx take most of this; the failure itself is immediate.
    expect(result.ms).toBeLessThan(10_000);
  };

  it('a folder that cannot be created (under /proc) fails at once instead of spinning', () => {
    refuses(
      ['keys', 'list', '--tenant', 't', '--db', '/proc/secinv-nope/x.db'],
      /\/proc\/secinv-nope\/x\.db .*cannot create its folder: ENOENT/,
    );
    refuses(['import', '--db', 'sqlite:/proc/secinv-nope/deeper/x.db', tenantFile()], /cannot create its folder/);
  });

  it('a folder, a file that is not a database, and a file under /proc are refused with the path', () => {
    refuses(['keys', 'list', '--tenant', 't', '--db', dir], /it is a folder, not a file/);
    const text = join(dir, 'notes.txt');
    writeFileSync(text, 'not a database\n'.repeat(100));
    refuses(['keys', 'list', '--tenant', 't', '--db', text], /notes\.txt .*file is not a database/);
    refuses(['keys', 'list', '--tenant', 't', '--db', '/proc/self/secinv.db'], /unable to open database file/);
  });
});

describe('standard input', () => {
  it('"-" given twice is bad usage', async () => {
    const result = await runCli('import', '--db', db, '-', '-');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('"-" (standard input) may be given only once');
  });
});

describe('import --dry-run writes nothing to disk', () => {
  it.skipIf(TEST_DIALECT !== 'sqlite')('a database that does not exist is not created, nor its folder', async () => {
    const target = join(dir, 'new-folder', 'inventory.db');
    const result = await runCli('import', '--dry-run', '--db', target, tenantFile());
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^validated \(dry run, nothing written\): 1 tenants,/);
    expect(result.stderr).toContain(
      'does not exist; validating against an empty inventory (dry run: nothing is created)',
    );
    expect(existsSync(join(dir, 'new-folder'))).toBe(false);
  });

  it.skipIf(TEST_DIALECT !== 'sqlite')('an existing database keeps its files, size and modification time', async () => {
    expect((await runCli('import', '--db', db, tenantFile())).code).toBe(0);
    const file = db.slice('sqlite:'.length);
    const asset = join(dir, 'asset.ndjson');
    writeFileSync(asset, `${ndjsonLine(assetRecord('sirn:assets:dry'))}\n`);
    const before = { files: readdirSync(dir).sort(), size: statSync(file).size, mtime: statSync(file).mtimeMs };
    const result = await runCli('import', '--dry-run', '--db', db, asset);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^validated \(dry run, nothing written\): 0 tenants, .* 1 assets,/);
    expect({ files: readdirSync(dir).sort(), size: statSync(file).size, mtime: statSync(file).mtimeMs }).toEqual(
      before,
    );
  });

  it.skipIf(TEST_DIALECT !== 'sqlite')(
    'an empty file is validated against an empty inventory and stays empty',
    async () => {
      const file = join(dir, 'empty.db');
      writeFileSync(file, '');
      const result = await runCli('import', '--dry-run', '--db', file, tenantFile());
      expect(result.code).toBe(0);
      expect(result.stderr).toContain('the database holds no inventory yet; validating against an empty inventory');
      expect(statSync(file).size).toBe(0);
    },
  );

  it.skipIf(TEST_DIALECT !== 'sqlite')('a database whose schema is behind is refused, not migrated', async () => {
    expect((await runCli('import', '--db', db, tenantFile())).code).toBe(0);
    const file = db.slice('sqlite:'.length);
    // Pretend the newest migration has not run yet.
    const database = new SQLite(file);
    database.prepare('delete from kysely_migration where name = (select max(name) from kysely_migration)').run();
    database.close();
    const before = { size: statSync(file).size, mtime: statSync(file).mtimeMs };
    const result = await runCli('import', '--dry-run', '--db', db, tenantFile());
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('run the command once without --dry-run to upgrade it');
    expect({ size: statSync(file).size, mtime: statSync(file).mtimeMs }).toEqual(before);
  });

  it.skipIf(TEST_DIALECT !== 'postgres')('a PostgreSQL database that does not exist is not created', async () => {
    const url = new URL(db);
    const name = `secinv_dry_${process.pid}_${Date.now()}`;
    url.pathname = `/${name}`;
    const result = await runCli('import', '--dry-run', '--db', url.toString(), tenantFile());
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(
      'does not exist; validating against an empty inventory (dry run: nothing is created)',
    );
    const client = new pg.Client({ connectionString: db });
    await client.connect();
    try {
      expect((await client.query('select 1 from pg_database where datname = $1', [name])).rowCount).toBe(0);
    } finally {
      await client.end();
    }
  });
});
