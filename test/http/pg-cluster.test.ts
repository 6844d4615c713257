// A real PostgreSQL restarted and frozen under the API, on a cluster of the test's own (initdb into a temporary
// folder, its own port), so that the machine's cluster the other tests share is never touched: during a restart every
// request is answered 503 with Retry-After and service comes back by itself; with every process of the cluster stopped
// by SIGSTOP (it hangs without closing a socket) every request is still answered 503, and service resumes on SIGCONT.
// Skipped, saying why, where the machine cannot create a cluster (no initdb, or root without a postgres user).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, chownSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { openStorage, type Storage } from '../../src/storage/index.js';
import { fixture } from '../fixtures.js';
import { createKey, importRecords, steadyPort, TENANT_A, TEST_DIALECT } from '../helpers.js';

/** The newest PostgreSQL's programs, and the user to run them as (initdb refuses root); or why there is no cluster. */
function clusterTools(): { bin: string; asUser: string[] } | { missing: string } {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => /^\d+$/.test(v)) : [];
  const version = versions.sort((a, b) => Number(b) - Number(a)).find((v) => existsSync(join(root, v, 'bin/initdb')));
  if (version === undefined) return { missing: `no ${root}/*/bin/initdb` };
  if (process.getuid?.() !== 0) return { bin: join(root, version, 'bin'), asUser: [] };
  try {
    execFileSync('id', ['-u', 'postgres'], { stdio: 'ignore' });
    execFileSync('runuser', ['--help'], { stdio: 'ignore' });
  } catch {
    return { missing: 'running as root, without a postgres user and runuser to run initdb as' };
  }
  return { bin: join(root, version, 'bin'), asUser: ['runuser', '-u', 'postgres', '--'] };
}

/** The postmaster and every process it started (backends, checkpointer, walwriter…). */
function clusterProcesses(dataDir: string): number[] {
  const postmaster = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const children = readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        // The parent pid is the second field after the command name, which is in parentheses.
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === postmaster;
      } catch {
        return false; // ended meanwhile
      }
    })
    .map(Number);
  return [postmaster, ...children];
}

const tools = TEST_DIALECT === 'postgres' ? clusterTools() : { missing: 'the PostgreSQL project runs it' };
if ('missing' in tools && TEST_DIALECT === 'postgres')
  console.warn(`SKIPPED: PostgreSQL restart and freeze on a private cluster: ${tools.missing}`);

describe.skipIf('missing' in tools)('a private PostgreSQL cluster restarted and frozen', () => {
  const { bin, asUser } = tools as { bin: string; asUser: string[] };
  let dir: string;
  let dataDir: string;
  let port: number;
  let admin: Storage;
  let api: Storage;
  let app: FastifyInstance;
  let key: string;
  let frozen: number[] = [];
  const pgCtl = (...args: string[]) =>
    execFileSync(
      asUser[0] ?? join(bin, 'pg_ctl'),
      [...asUser.slice(1), ...(asUser.length ? [join(bin, 'pg_ctl')] : []), ...args],
      {
        stdio: 'ignore',
      },
    );
  const start = () =>
    pgCtl(
      '-D',
      dataDir,
      '-l',
      join(dir, 'log'),
      '-w',
      '-o',
      `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`,
      'start',
    );

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'secinv-cluster-'));
    dataDir = join(dir, 'data');
    if (asUser.length) chownSync(dir, Number(execFileSync('id', ['-u', 'postgres']).toString()), -1);
    const initdb = [join(bin, 'initdb'), '-D', dataDir, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8'];
    execFileSync(asUser[0] ?? initdb[0]!, [...asUser.slice(1), ...(asUser.length ? initdb : initdb.slice(1))], {
      stdio: 'ignore',
    });
    port = await steadyPort();
    start();
    const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
    admin = await openStorage(url);
    expect((await importRecords(admin, fixture)).problems).toEqual([]);
    key = await createKey(admin, TENANT_A);
    api = await openStorage(url, { role: 'api', poolMax: 2, connectTimeoutMs: 500, statementTimeoutMs: 300 });
    app = await buildApp({ storage: api });
  }, 120_000);
  afterAll(async () => {
    for (const pid of frozen) process.kill(pid, 'SIGCONT');
    await app?.close();
    await api?.close();
    await admin?.close();
    try {
      pgCtl('-D', dataDir, '-m', 'immediate', '-w', 'stop');
    } catch {
      // already stopped
    }
    rmSync(dir, { recursive: true, force: true });
  });

  const list = () => app.inject({ url: '/v1/tenant/assets?perPage=1', headers: { authorization: `Bearer ${key}` } });
  const expect503 = (res: Awaited<ReturnType<typeof list>>) => {
    expect(res.statusCode, res.body).toBe(503);
    expect(res.headers['retry-after']).toBe('2');
    expect(res.json().errors[0].code).toBe('unavailable');
  };
  /** Retries as a client honouring Retry-After would (without the wait), until an answer other than 503. */
  const untilAnswered = async () => {
    for (let attempt = 0; attempt < 20; attempt += 1) {
      const res = await list();
      if (res.statusCode !== 503) return res;
    }
    throw new Error('still 503');
  };

  it('a restart: 503 with Retry-After while it is down, then answers again by itself', async () => {
    const first = await list();
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json().meta.total).toBe(6);
    pgCtl('-D', dataDir, '-m', 'fast', '-w', 'stop');
    for (let i = 0; i < 3; i += 1) expect503(await list());
    start();
    const res = await untilAnswered();
    expect(res.statusCode).toBe(200);
    expect(res.json().meta.total).toBe(6);
  });

  it('a freeze (SIGSTOP): every request answered 503, none left hanging; service resumes on SIGCONT', async () => {
    expect((await list()).statusCode).toBe(200);
    frozen = clusterProcesses(dataDir);
    for (const pid of frozen) process.kill(pid, 'SIGSTOP');
    try {
      // Two requests on the pool's open connections, one waiting for a new one: each is answered.
      const answers = await Promise.all([list(), list(), list()]);
      for (const res of answers) expect503(res);
      expect503(await list());
    } finally {
      for (const pid of frozen) process.kill(pid, 'SIGCONT');
      frozen = [];
    }
    const res = await untilAnswered();
    expect(res.statusCode).toBe(200);
    expect(res.json().meta.total).toBe(6);
  });
});
