// `secinv serve --workers 2`, real processes (docs/DESIGN.md §112): both serving processes answer on the one port, a
// scan uploaded through it is applied once (by the primary's scan thread) and read after by either, the metrics are
// summed over both, a serving process killed is started again while the other answers, SIGTERM ends them all with
// exit 0, and a crash loop ends the service with exit 1.
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixture } from '../fixtures.js';
import { createKey, openStorageWithKeys, TENANT_A, TEST_DIALECT, type TestStorage } from '../helpers.js';
import { endedScan, expectAppliedOnce, killLeft, uploadReport } from './scan-processes.js';
import { exitCodeAfter, runCli, spawnServe } from './serve-process.js';

let admin: TestStorage;
let key: string;
beforeAll(async () => {
  ({ opened: admin } = await openStorageWithKeys(fixture, []));
  key = await createKey(admin.storage, TENANT_A, { scopes: ['read', 'ingest'] });
});
afterAll(async () => admin.dispose());

const TOKEN = 'a-metrics-token-of-some-length';

/** The processes a process started (its main thread's children). */
const childrenOf = (pid: number): number[] =>
  readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
    .split(' ')
    .filter((s) => s !== '')
    .map(Number);

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** The JSON lines the processes write on their shared stdout, from now on. */
function logLines(child: ChildProcess): Record<string, unknown>[] {
  const lines: Record<string, unknown>[] = [];
  let rest = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    const parts = (rest + chunk.toString()).split('\n');
    rest = parts.pop()!;
    for (const line of parts) if (line.startsWith('{')) lines.push(JSON.parse(line) as Record<string, unknown>);
  });
  return lines;
}

/** One GET on a connection of its own, so that the primary hands each to the next serving process. */
const get = (port: number, path: string, headers: Record<string, string> = { authorization: `Bearer ${key}` }) =>
  new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent: false, headers }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });

/** The pids that logged an answer to `url` (each serving process logs the requests it answers). */
const answeredBy = (lines: Record<string, unknown>[], url: string): Set<unknown> =>
  new Set(lines.filter((l) => l.msg === 'request' && l.url === url).map((l) => l.pid));

const until = async (done: () => boolean): Promise<void> => {
  while (!done()) await new Promise((resolve) => setTimeout(resolve, 50));
};

/**
 * GETs `path`, one new connection after another, until both serving processes have answered it (by their log lines):
 * the answers, each checked by `check`.
 */
async function fromBoth(
  port: number,
  path: string,
  lines: Record<string, unknown>[],
  check: (answer: { status: number; body: string }) => void,
): Promise<{ pids: Set<unknown>; sent: number }> {
  const from = lines.length;
  for (let sent = 1; sent <= 40; sent += 1) {
    check(await get(port, path));
    // Its log line follows the answer.
    await until(() => lines.slice(from).filter((l) => l.msg === 'request' && l.url === path).length === sent);
    const pids = answeredBy(lines.slice(from), path);
    if (pids.size === 2) return { pids, sent };
  }
  throw new Error(`${path} was not answered by both serving processes`);
}

/** The sum of a counter's samples with these labels, in Prometheus text. */
const counted = (text: string, name: string, labels: string): number =>
  text
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) && line.includes(labels))
    .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);

describe('secinv serve --workers 2', { timeout: 120_000 }, () => {
  it('serves from both processes, applies a scan once for both, restarts one killed, and ends on SIGTERM', async () => {
    const { child, port, stderr } = await spawnServe(admin.url, {
      SECINV_WORKERS: '2',
      SECINV_LOG_LEVEL: 'info',
      SECINV_RATE_LIMIT_PER_MINUTE: '0',
      SECINV_SHUTDOWN_GRACE_MS: '200',
      SECINV_METRICS_TOKEN: TOKEN,
      SECINV_METRICS_PORT: '0',
    });
    const lines = logLines(child);
    const seen = new Set<number>([child.pid!]);
    try {
      const serving = childrenOf(child.pid!);
      expect(serving).toHaveLength(2);
      serving.forEach((pid) => seen.add(pid));

      // Both answer: the primary hands new connections out in turn. The list is kept by each, counted by each.
      const list = '/v1/tenant/assets?perPage=1&sortBy=name';
      const total = (body: string) => (JSON.parse(body) as { meta: { total: number } }).meta.total;
      let before = -1;
      const first = await fromBoth(port, list, lines, (answer) => {
        expect(answer.status).toBe(200);
        before = total(answer.body);
      });
      expect([...first.pids].sort()).toEqual([...serving].sort());

      // The metrics are both processes' summed, on the metrics port and on the API port alike.
      const metricsPort = Number(/metrics at http:\/\/[^:]+:(\d+)/.exec(stderr)?.[1]);
      const assetsAnswered = 'route="/v1/tenant/assets",status="200"';
      const scraped = await get(metricsPort, '/metrics', {});
      expect(counted(scraped.body, 'secinv_http_requests_total', assetsAnswered)).toBe(first.sent);
      const viaApi = await get(port, '/metrics', { authorization: `Bearer ${TOKEN}` });
      expect(viaApi.status).toBe(200);
      expect(counted(viaApi.body, 'secinv_http_requests_total', assetsAnswered)).toBe(first.sent);

      // A scan uploaded through the port is applied once, by the primary's thread, and both read it after: the list's
      // kept body and count of the version before are not served again by either.
      const base = `http://127.0.0.1:${port}`;
      const accepted = await uploadReport(base, key, 'eu-west-3', 'workers-upload');
      expect(accepted.status).toBe(202);
      const scan = await endedScan(base, key, accepted.location!);
      await expectAppliedOnce(base, key, scan, 'eu-west-3');
      const applied = lines.filter((l) => l.msg === 'scan' && l.scanId === scan.id && l.status === 'succeeded');
      expect(applied.map((l) => l.pid)).toEqual([child.pid]);
      await fromBoth(port, list, lines, (answer) => expect(total(answer.body)).toBe(before + 1));

      // One killed: once the primary has seen it end, the other answers; the primary starts another, which answers too.
      const [victim, survivor] = serving as [number, number];
      process.kill(victim, 'SIGKILL');
      await until(() => lines.some((l) => l.msg === 'serving process ended; starting another'));
      expect(lines.find((l) => l.msg === 'serving process ended; starting another')).toMatchObject({
        pid: child.pid,
        servingPid: victim,
        signal: 'SIGKILL',
      });
      expect((await get(port, '/livez', {})).status).toBe(200);
      await until(() => lines.some((l) => l.msg === 'serving process started again'));
      const now = childrenOf(child.pid!);
      expect(now).toHaveLength(2);
      expect(now).toContain(survivor);
      const replacement = now.find((pid) => pid !== survivor)!;
      expect(replacement).not.toBe(victim);
      seen.add(replacement);
      const restarted = await fromBoth(port, list, lines, (answer) => expect(answer.status).toBe(200));
      expect(restarted.pids).toContain(replacement);

      expect(await exitCodeAfter(child, 'SIGTERM')).toBe(0);
      expect([...seen].filter(alive)).toEqual([]);
      // Each drained as one server does (the primary's line names the signal).
      const shuttingDown = () => lines.filter((l) => l.msg === 'shutting down');
      await until(() => shuttingDown().length === 3);
      expect(
        shuttingDown()
          .map((l) => l.pid)
          .sort(),
      ).toEqual([child.pid, ...now].sort());
    } finally {
      killLeft(child);
      for (const pid of seen) if (alive(pid)) process.kill(pid, 'SIGKILL');
    }
  });

  it.skipIf(TEST_DIALECT !== 'sqlite')('ends with exit 1 and says so when the processes keep dying', async () => {
    const { child } = await spawnServe(admin.url, { SECINV_WORKERS: '2' });
    let stderr = '';
    child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
    const seen = new Set<number>();
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    let done = false;
    void exited.then(() => (done = true));
    try {
      // Every serving process killed as soon as it is there: six ends within the minute pass the bound of five.
      while (!done) {
        for (const pid of alive(child.pid!) ? childrenOf(child.pid!) : []) {
          if (seen.has(pid)) continue;
          seen.add(pid);
          process.kill(pid, 'SIGKILL');
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(await exited).toBe(1);
      expect(stderr).toMatch(/secinv: serving processes ended 6 times within 60 s \(the last, pid \d+: SIGKILL\)/);
      expect([...seen].filter(alive)).toEqual([]);
    } finally {
      killLeft(child);
    }
  });

  it.skipIf(TEST_DIALECT !== 'sqlite')('says once why the processes could not listen, and exits 1', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as AddressInfo;
    try {
      const result = await runCli(['serve', '--db', admin.url, '--port', String(port)], { SECINV_WORKERS: '2' });
      expect(result.code).toBe(1);
      const refused = `secinv: cannot serve the API on 127.0.0.1:${port} (EADDRINUSE): the port is in use`;
      expect(result.stderr.split('\n').filter((line) => line.startsWith(refused))).toHaveLength(1);
      expect(result.stderr).not.toContain('serving http');
    } finally {
      taken.close();
    }
  });

  it('refuses a number of processes that is not one: exit 1, naming --workers', async () => {
    for (const [flags, env] of [
      [['--workers', '0'], {}],
      [[], { SECINV_WORKERS: 'many' }],
    ] as const) {
      const result = await runCli(['serve', '--db', admin.url, '--port', '0', ...flags], env);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(
        /^secinv: invalid --workers '(0|many)' \(an integer from 1 to 256; env SECINV_WORKERS\)\n$/,
      );
    }
  });
});
