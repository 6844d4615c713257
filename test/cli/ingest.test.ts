// `secinv ingest` on the command line: flags, the summary, exit codes, gzip and standard-input files.
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { openStorage, type ScanRecord } from '../../src/storage/index.js';
import { createTestDatabase, TEST_DIALECT } from '../helpers.js';
import { runCli as runServe } from '../http/serve-process.js';
import { otherWrite as otherWriteTo, waitingCommand, WAITING } from './other-write.js';
import { runCli } from './run.js';

const TEAMDOJO = fileURLToPath(
  new URL('../fixtures/ingest/trivy/trivy-image-teamdojo-multi-target.json', import.meta.url),
);
const REPO = fileURLToPath(new URL('../fixtures/ingest/trivy/trivy-repo-npm.json', import.meta.url));

let dir: string;
let db: string;
let drop: () => Promise<void>;
let tenant: string;
// A migrated copy: no test here is about a database that does not exist yet (newcomer.test.ts is).
beforeEach(async () => {
  ({ url: db, dir, drop } = await createTestDatabase(undefined, { migrated: true }));
  tenant = (await runCli('tenants', 'create', '--name', 'scans', '--db', db)).stdout.trim();
});
afterEach(async () => drop());

/** The tenant's scans, newest first. */
async function scans(): Promise<ScanRecord[]> {
  const storage = await openStorage(db);
  try {
    return (await storage.listScans({ tenantId: tenant, dataVersion: 0 }, { perPage: 100 }, undefined)).items;
  } finally {
    await storage.close();
  }
}

describe('secinv ingest', () => {
  it('ingests a report (gzip and UTF-16 too), prints a line per file on stderr and a summary on stdout', async () => {
    const other = (name: string) =>
      JSON.stringify({ ...(JSON.parse(readFileSync(TEAMDOJO, 'utf8')) as object), ArtifactName: name });
    const gz = join(dir, 'teamdojo.json.gz');
    writeFileSync(gz, gzipSync(Buffer.from(other('other:2'))));
    // As Windows PowerShell's `trivy … > report.json` writes it.
    const utf16 = join(dir, 'teamdojo-utf16.json');
    writeFileSync(utf16, Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(other('other:3'), 'utf16le')]));
    const result = await runCli(
      'ingest',
      '--tenant',
      tenant,
      '--provider',
      'GCP',
      '--region',
      'europe-west1',
      '--db',
      db,
      TEAMDOJO,
      gz,
      utf16,
    );
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('ingested: 3 files\n');
    expect(result.stderr).toContain(
      `${TEAMDOJO}: trivy, asset sirn:assets:${tenant}:gcp:artifactregistry:image:europe-west1:teamdojo:latest created, findings 5 added, 0 updated, 0 unchanged, 0 resolved\n`,
    );
    expect(result.stderr).toContain(
      `${gz}: trivy, asset sirn:assets:${tenant}:gcp:artifactregistry:image:europe-west1:other:2 created`,
    );
    const listed = JSON.parse((await runCli('tenants', 'list', '--json', '--db', db)).stdout) as {
      assets: number;
      findings: number;
    }[];
    expect(result.stderr).toContain(
      `${utf16}: trivy, asset sirn:assets:${tenant}:gcp:artifactregistry:image:europe-west1:other:3 created, findings 5 added`,
    );
    expect(listed[0]).toMatchObject({ assets: 3, findings: 15 });

    // Each file is one of the tenant's scans, as an upload would be: succeeded, without a key, named by its file.
    const storage = await openStorage(db);
    try {
      const { items } = await storage.listScans({ tenantId: tenant, dataVersion: 0 }, { perPage: 10 }, undefined);
      expect(items.map((scan) => [scan.name, scan.status, scan.format, scan.keyId]).sort()).toEqual([
        ['teamdojo-utf16.json', 'succeeded', 'trivy', null],
        ['teamdojo.json.gz', 'succeeded', 'trivy', null],
        ['trivy-image-teamdojo-multi-target.json', 'succeeded', 'trivy', null],
      ]);
      const first = items.find((scan) => scan.name === 'trivy-image-teamdojo-multi-target.json')!;
      expect(first.sizeBytes).toBe(readFileSync(TEAMDOJO).length);
      expect(first.summary?.findings).toEqual({ added: 5, updated: 0, unchanged: 0, resolved: 0 });
      expect(first.options).toEqual({ format: 'auto', provider: 'GCP', region: 'europe-west1', resolve: true });
    } finally {
      await storage.close();
    }
  });

  it('refuses with the file named and exit 1; bad flags are exit 2', async () => {
    const noAsset = await runCli('ingest', '--tenant', tenant, '--db', db, REPO);
    expect(noAsset.code).toBe(1);
    expect(noAsset.stderr).toContain(
      `${REPO}: this is a Trivy repository scan, which names no asset: give --asset ASSET_ID\n`,
    );
    expect(noAsset.stderr).toContain('secinv: ingest rejected: 1 problem; nothing was written\n');
    // A path that is no readable file says why in words, beside the code; the reports before it are not written.
    const unreadable = await runCli(
      'ingest',
      '--tenant',
      tenant,
      '--provider',
      'AWS',
      '--db',
      db,
      TEAMDOJO,
      dir,
      join(dir, 'nope.json'),
    );
    expect(unreadable.code).toBe(1);
    expect(unreadable.stderr).toContain(`${dir}: cannot read: it is a folder, not a file (EISDIR)\n`);
    expect(unreadable.stderr).toContain(`${join(dir, 'nope.json')}: cannot read: no such file (ENOENT)\n`);
    expect(unreadable.stderr).toContain('secinv: ingest rejected: 2 problems; nothing was written\n');
    const unknown = await runCli('ingest', '--tenant', 'nobody', '--db', db, REPO);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("secinv: unknown tenant 'nobody'");
    const integration = await runCli('ingest', '--tenant', tenant, '--integration', 'aws-prod', '--db', db, TEAMDOJO);
    expect(integration.code).toBe(1);
    expect(integration.stderr).toContain("secinv: --integration must be a UUID, not 'aws-prod'\n");
    expect((await runCli('ingest', '--tenant', tenant, '--provider', 'Oracle', '--db', db, TEAMDOJO)).code).toBe(2);
    expect((await runCli('ingest', '--tenant', tenant, '--format', 'sarif', '--db', db, TEAMDOJO)).code).toBe(2);
    expect((await runCli('ingest', '--db', db, TEAMDOJO)).code).toBe(2);
    expect((await runCli('ingest', '--tenant', tenant, '--db', db, '-', '-')).code).toBe(2);
    const listed = JSON.parse((await runCli('tenants', 'list', '--json', '--db', db)).stdout) as { assets: number }[];
    expect(listed[0]?.assets).toBe(0);
    // Each file refused is a failed scan; a bad flag, an unknown tenant or integration ran nothing to list.
    const found = new Map((await scans()).map((scan) => [scan.name, [scan.status, scan.problems]]));
    expect(found).toEqual(
      new Map([
        ['nope.json', ['failed', [{ message: 'cannot read: no such file (ENOENT)', file: join(dir, 'nope.json') }]]],
        [basename(dir), ['failed', [{ message: 'cannot read: it is a folder, not a file (EISDIR)', file: dir }]]],
        [
          'trivy-repo-npm.json',
          [
            'failed',
            [{ message: 'this is a Trivy repository scan, which names no asset: give --asset ASSET_ID', file: REPO }],
          ],
        ],
      ]),
    );
  });

  it('lists each file of a refused run as a failed scan with the problems it printed, and writes nothing else', async () => {
    const report = readFileSync(TEAMDOJO);
    const notReport = join(dir, 'notes.json');
    writeFileSync(notReport, '{"hello": "world"}');
    const truncated = join(dir, 'truncated.json');
    writeFileSync(truncated, report.subarray(0, report.length - 100));
    const field = join(dir, 'field.json');
    const parsed = JSON.parse(report.toString()) as { Results: { Vulnerabilities?: Record<string, unknown>[] }[] };
    parsed.Results.find((r) => r.Vulnerabilities)!.Vulnerabilities![0]!.VulnerabilityID = 5;
    writeFileSync(field, JSON.stringify(parsed));
    const cloud = ['--provider', 'AWS', '--region', 'us-east-1'];
    // Not on a dry run: it writes nothing, its scans included.
    const dry = await runCli('ingest', '--tenant', tenant, ...cloud, '--dry-run', '--db', db, notReport);
    expect(dry.code).toBe(1);
    expect(await scans()).toEqual([]);

    const run = await runCli('ingest', '--tenant', tenant, ...cloud, '--db', db, TEAMDOJO, notReport, truncated, field);
    expect(run.code).toBe(1);
    const asset = await runCli('ingest', '--tenant', tenant, '--asset', 'sirn:nothing', '--db', db, REPO);
    expect(asset.code).toBe(1);
    const listed = JSON.parse((await runCli('tenants', 'list', '--json', '--db', db)).stdout) as { assets: number }[];
    expect(listed[0]?.assets).toBe(0);

    const found = await scans();
    // The files refused, not the one that was fine but not written either.
    expect(found.map((scan) => scan.name).sort()).toEqual([
      'field.json',
      'notes.json',
      'trivy-repo-npm.json',
      'truncated.json',
    ]);
    const printed = run.stderr + asset.stderr;
    for (const scan of found) {
      expect(scan).toMatchObject({ status: 'failed', keyId: null, summary: null, gate: null });
      expect(scan.problems.length).toBeGreaterThan(0);
      for (const problem of scan.problems) {
        // The line the command printed: the file, the JSON path when there is one (field.json's, below), the message.
        const lines = printed.split('\n');
        if (problem.path === undefined) expect(lines).toContain(`${problem.file}: ${problem.message}`);
        else
          expect(lines.some((l) => l.startsWith(`${problem.file}: $.`) && l.endsWith(`: ${problem.message}`))).toBe(
            true,
          );
      }
    }
    const byName = new Map(found.map((scan) => [scan.name, scan]));
    expect(byName.get('notes.json')).toMatchObject({
      format: null,
      sizeBytes: 18,
      sha256: createHash('sha256').update('{"hello": "world"}').digest('hex'),
      options: { format: 'auto', provider: 'AWS', region: 'us-east-1', resolve: true },
    });
    expect(byName.get('notes.json')!.problems[0]!.message).toContain('is JSON but not a report secinv reads');
    expect(byName.get('truncated.json')!.problems[0]!.message).toContain('ends before the JSON is complete');
    expect(byName.get('truncated.json')!.sizeBytes).toBe(report.length - 100);
    expect(byName.get('field.json')!.problems).toEqual([
      {
        message: 'is required (a non-empty string)',
        file: field,
        path: '/Results/0/Vulnerabilities/0/VulnerabilityID',
      },
    ]);
    expect(run.stderr).toContain(`${field}: $.Results[0].Vulnerabilities[0].VulnerabilityID: is required`);
    expect(byName.get('trivy-repo-npm.json')).toMatchObject({
      format: 'trivy',
      sizeBytes: readFileSync(REPO).length,
      problems: [{ message: `--asset: tenant ${tenant} has no asset 'sirn:nothing'`, file: REPO }],
    });
  });

  it('--dry-run validates and writes nothing', async () => {
    const result = await runCli('ingest', '--tenant', tenant, '--provider', 'AWS', '--dry-run', '--db', db, TEAMDOJO);
    expect(result).toMatchObject({ code: 0, stdout: 'validated (dry run, nothing written): 1 file\n' });
    const listed = JSON.parse((await runCli('tenants', 'list', '--json', '--db', db)).stdout) as { assets: number }[];
    expect(listed[0]?.assets).toBe(0);
  });
});

describe.runIf(TEST_DIALECT === 'sqlite')('secinv ingest beside another write (SQLite)', () => {
  const cloud = ['--provider', 'AWS', '--region', 'us-east-1'];
  const waiting = WAITING;

  const waitingIngest = () => waitingCommand(['ingest', '--tenant', tenant, ...cloud, '--db', db, TEAMDOJO]);
  const otherWrite = (journal: 'wal' | 'delete') => otherWriteTo(db, tenant, journal);

  it("waits for the other process's write to commit, says so, then writes", async () => {
    // As a second CI job's ingest would hold it beside a running server.
    const other = otherWrite('wal');
    try {
      const ingest = await waitingIngest();
      expect(other.prepare('select count(*) as n from assets').get()).toEqual({ n: 0 });
      other.exec('commit');
      expect(await ingest.closed).toBe(0);
      expect(ingest.stderr().split(waiting)).toHaveLength(2);
      expect(other.prepare('select count(*) as n from assets').get()).toEqual({ n: 1 });
      expect(other.prepare('select name from tenants').get()).toEqual({ name: 'renamed' });
    } finally {
      other.close();
    }
  });

  it('does not make the server wait: started while a write holds the file whole, it is refused', async () => {
    const other = otherWrite('delete');
    try {
      const serve = await runServe(['serve', '--db', db, '--port', '0']);
      expect(serve.code).toBe(1);
      expect(serve.stderr).toContain('another process is writing it: retry when that write ends');
      expect(serve.stderr).not.toContain(waiting);
      other.exec('rollback');
    } finally {
      other.close();
    }
  });

  it('waits as well for a write that holds the file whole, with no server beside it', async () => {
    const other = otherWrite('delete');
    try {
      const ingest = await waitingIngest();
      other.exec('commit');
      other.close();
      expect(await ingest.closed).toBe(0);
      expect(ingest.stderr().split(waiting)).toHaveLength(2);
      const after = new Database(db.replace(/^sqlite:/, ''), { readonly: true });
      try {
        expect(after.prepare('select count(*) as n from assets').get()).toEqual({ n: 1 });
        expect(after.prepare('select name from tenants').get()).toEqual({ name: 'renamed' });
        expect(after.pragma('journal_mode', { simple: true })).toBe('wal');
      } finally {
        after.close();
      }
    } finally {
      if (other.open) other.close();
    }
  });
});
