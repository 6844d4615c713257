// The command line, in process: stdout/stderr split, exit codes, and each command end to end on a real database file.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { loadConfig } from '../../src/config.js';
import { startServer } from '../../src/server.js';
import { displayDatabaseUrl, openStorage } from '../../src/storage/index.js';
import { createTestDatabase, TENANT_A, TEST_DIALECT } from '../helpers.js';
import { assetRecord, ndjson, tenantRecord } from '../records.js';
import { runCli, writeTenantFile } from './run.js';

let dir: string;
let db: string;
let drop: () => Promise<void>;
beforeEach(async () => {
  ({ url: db, dir, drop } = await createTestDatabase());
});
afterEach(async () => drop());

/** The line every command that opens the test database writes first on stderr. */
let opened = '';
beforeEach(() => {
  opened = `secinv: database ${displayDatabaseUrl(db)}\n`;
});

const run = runCli;

const tenantFile = () => writeTenantFile(dir);

describe('secinv CLI', () => {
  it('--help works for every command and exits 0', async () => {
    for (const args of [
      ['--help'],
      ['serve', '--help'],
      ['import', '--help'],
      ['keys', '--help'],
      ['keys', 'create', '--help'],
      ['keys', 'list', '--help'],
      ['keys', 'revoke', '--help'],
      ['generate', '--help'],
      ['demo', '--help'],
    ]) {
      const result = await run(...args);
      expect(result.code, args.join(' ')).toBe(0);
      expect(result.stdout).toContain('Usage: secinv');
    }
  });

  it('bad usage exits 2', async () => {
    expect((await run('frobnicate')).code).toBe(2);
    expect((await run('keys', 'create', '--db', db)).code).toBe(2);
    expect((await run('keys', 'create', '--tenant', TENANT_A, '--expires-in', 'soon', '--db', db)).code).toBe(2);
    expect((await run('import', '--db', db)).code).toBe(2);
    expect((await run('generate', '--assets', '-3')).code).toBe(2);
  });

  it('import and ingest tell the executable which database they are about to write (for its heap growth); reads do not', async () => {
    const told: string[] = [];
    const io = { stdout: new PassThrough(), stderr: new PassThrough() };
    const hooks = { bulkWriteStarting: (url: string) => void told.push(url) };
    const report = fileURLToPath(
      new URL('../fixtures/ingest/trivy/trivy-image-example-app-all-statuses.json', import.meta.url),
    );
    expect(await main(['import', '--db', db, tenantFile()], io, hooks)).toBe(0);
    expect(await main(['feeds', 'status', '--db', db], io, hooks)).toBe(0);
    expect(await main(['ingest', '--tenant', TENANT_A, '--provider', 'AWS', '--db', db, report], io, hooks)).toBe(0);
    expect(told).toEqual([db, db]);
  });

  it('import prints a summary line on stdout; keys create prints the key alone on stdout', async () => {
    const imported = await run('import', '--db', db, tenantFile());
    expect(imported.code).toBe(0);
    expect(imported.stdout).toMatch(
      /^imported: 1 tenants, 0 environments, 0 integrations, 0 assetGroups, 0 exemptions, 0 assets, 0 vulnerabilities, 0 risks in \d+\.\d s\n$/,
    );

    const created = await run('keys', 'create', '--tenant', TENANT_A, '--name', 'ci', '--expires-in', '30', '--db', db);
    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(/^secinv_[A-Za-z0-9_-]{43}\n$/);
    expect(created.stderr).toContain('created key key_');
    expect(created.stderr).not.toContain(created.stdout.trim());

    const listed = await run('keys', 'list', '--tenant', TENANT_A, '--json', '--db', db);
    const keys = JSON.parse(listed.stdout) as Record<string, unknown>[];
    expect(keys).toHaveLength(1);
    expect(Object.keys(keys[0]!).sort()).toEqual([
      'createdAt',
      'expiresAt',
      'id',
      'lastUsedAt',
      'name',
      'prefix',
      'revokedAt',
      'scopes',
    ]);
    expect(keys[0]).toMatchObject({
      name: 'ci',
      revokedAt: null,
      lastUsedAt: null,
      scopes: ['read'],
      prefix: created.stdout.slice(0, 13),
    });
    expect(listed.stdout).not.toContain(created.stdout.trim());

    const table = await run('keys', 'list', '--tenant', TENANT_A, '--db', db);
    const [header, row] = table.stdout.trim().split('\n');
    expect(header).toMatch(/^ID\s+NAME\s+PREFIX\s+SCOPES\s+CREATED\s+EXPIRES\s+REVOKED\s+LAST USED$/);
    expect(row?.split(/\s+/)[0]).toBe(keys[0]!.id);
    expect(row?.split(/\s+/)[3]).toBe('read');

    expect((await run('keys', 'revoke', String(keys[0]!.id), '--db', db)).code).toBe(0);
    const after = JSON.parse((await run('keys', 'list', '--tenant', TENANT_A, '--json', '--db', db)).stdout) as {
      revokedAt: string | null;
    }[];
    expect(after[0]?.revokedAt).toMatch(/^\d{4}-\d{2}-\d{2}T/);
  });

  it('keys create --scope gives a key its scopes, listed; an unknown scope exits 1 naming it', async () => {
    expect((await run('import', '--db', db, tenantFile())).code).toBe(0);
    const created = await run('keys', 'create', '--tenant', TENANT_A, '--scope', 'ingest', '--db', db);
    expect(created.code).toBe(0);
    expect(created.stderr).toContain('(ingest) for tenant');
    const both = await run('keys', 'create', '--tenant', TENANT_A, '--scope', 'ingest, read', '--db', db);
    expect(both.stderr).toContain('(read,ingest) for tenant');
    const keys = JSON.parse((await run('keys', 'list', '--tenant', TENANT_A, '--json', '--db', db)).stdout) as {
      scopes: string[];
    }[];
    expect(keys.map((k) => k.scopes).slice(-2)).toEqual([['ingest'], ['read', 'ingest']]);
    const bad = await run('keys', 'create', '--tenant', TENANT_A, '--scope', 'write', '--db', db);
    expect(bad).toMatchObject({ code: 1, stdout: '' });
    expect(bad.stderr).toContain("secinv: --scope: unknown scope 'write': each must be one of read, ingest");
  });

  it('failures exit 1 with a one-line reason on stderr', async () => {
    const unknownKey = await run('keys', 'revoke', 'key_nope', '--db', db);
    expect(unknownKey).toMatchObject({ code: 1, stdout: '', stderr: `${opened}secinv: no key with id 'key_nope'\n` });
    const unknownTenant = await run('keys', 'create', '--tenant', 'nobody', '--db', db);
    expect(unknownTenant).toMatchObject({ code: 1, stdout: '' });
    expect(unknownTenant.stderr).toBe(`${opened}secinv: unknown tenant 'nobody' (import it first)\n`);
  });

  it('a rejected import exits 1, lists each problem on stderr and writes nothing', async () => {
    const path = join(dir, 'bad.ndjson');
    writeFileSync(path, ndjson([tenantRecord(), assetRecord('a', { lastObservedAt: undefined })]));
    const result = await run('import', '--db', db, path);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      `${opened}${path}:2: record.lastObservedAt: is required\nsecinv: import rejected: 1 problem; nothing was written\n`,
    );
    const storage = await openStorage(db);
    expect(await storage.listTenants()).toEqual([]);
    await storage.close();
  });

  it('import --dry-run writes nothing', async () => {
    const result = await run('import', '--dry-run', '--db', db, tenantFile());
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^validated \(dry run, nothing written\): 1 tenants/);
    const storage = await openStorage(db);
    expect(await storage.listTenants()).toEqual([]);
    await storage.close();
  });

  it('generate writes the same NDJSON for the same seed, and it imports cleanly', async () => {
    const a = await run(
      'generate',
      '--seed',
      'x',
      '--tenants',
      '2',
      '--assets',
      '30',
      '--findings-per-asset',
      '3',
      '--risks',
      '10',
    );
    const b = await run(
      'generate',
      '--seed',
      'x',
      '--tenants',
      '2',
      '--assets',
      '30',
      '--findings-per-asset',
      '3',
      '--risks',
      '10',
    );
    expect(a.code).toBe(0);
    expect(a.stdout).toBe(b.stdout);
    const path = join(dir, 'gen.ndjson');
    writeFileSync(path, a.stdout);
    const imported = await run('import', '--db', db, path);
    expect(imported.stderr).toBe(opened);
    expect(imported.stdout).toMatch(/^imported: 2 tenants, .* 60 assets, /);
  });

  it('serve listens and answers with the API', async () => {
    const path = tenantFile();
    expect((await run('import', '--db', db, path)).code).toBe(0);
    const storage = await openStorage(db);
    const server = await startServer(loadConfig({ db, port: '0' }, { SECINV_LOG_LEVEL: 'silent' }), storage);
    try {
      const res = await fetch(`${server.url}/v1/tenant/assets`);
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer');
    } finally {
      await server.close();
    }
  });

  it.skipIf(TEST_DIALECT !== 'postgres')('creates a PostgreSQL database that does not exist yet', async () => {
    const url = new URL(db);
    url.pathname = `${url.pathname}_new`;
    const result = await run('keys', 'list', '--tenant', TENANT_A, '--json', '--db', url.toString());
    try {
      expect(result).toMatchObject({
        code: 0,
        stdout: '[]\n',
        stderr: `secinv: database ${displayDatabaseUrl(url.toString())}\n`,
      });
    } finally {
      const admin = new pg.Client({ connectionString: db });
      await admin.connect();
      await admin.query(`drop database if exists ${url.pathname.slice(1)} with (force)`);
      await admin.end();
    }
  });

  it('rejects an invalid database URL or port with a clear reason', async () => {
    expect(await run('keys', 'list', '--tenant', TENANT_A, '--db', 'mysql://x')).toMatchObject({
      code: 1,
      stderr: "secinv: unsupported database URL 'mysql://x' (use sqlite:PATH or postgres://…)\n",
    });
    expect(await run('serve', '--db', db, '--port', '99999')).toMatchObject({
      code: 1,
      stderr: "secinv: invalid port '99999' (0 to 65535)\n",
    });
  });
});
