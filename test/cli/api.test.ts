// `secinv api …` end to end: the command line in process, a real server on a loopback port over a real database of
// each dialect. Every record once in every format, the filters as flags, the change log read and followed (the
// follower as a process of its own, ended by a signal), the profiles file, and each failure's message.
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { parse as parseCsv } from 'csv-parse/sync';
import { afterAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { createClient, type Change, type ChangeListParams } from '../../src/client/index.js';
import { main } from '../../src/cli/main.js';
import { listVulnerabilitiesSpec } from '../../src/domain/vulnerabilities.js';
import { closedPort, sharedServer } from '../client/server.js';
import { importRecords } from '../helpers.js';
import { exitCodeAfter, spawnCli } from '../http/serve-process.js';
import { assetRecord } from '../records.js';

const server = sharedServer();
const dir = mkdtempSync(join(tmpdir(), 'secinv-api-'));
let configFile: string;
let n = 0;

beforeEach(() => {
  // Each test its own profiles file, and nothing from the environment of the run.
  configFile = join(dir, `config-${++n}.json`);
  vi.stubEnv('SECINV_CONFIG_FILE', configFile);
  vi.stubEnv('SECINV_URL', '');
  vi.stubEnv('SECINV_API_KEY', '');
  vi.stubEnv('SECINV_PROFILE', undefined);
});
afterAll(() => {
  vi.unstubAllEnvs();
  // The profiles files hold the keys the tests made.
  rmSync(dir, { recursive: true, force: true });
});

async function run(argv: string[], options: { stdin?: string; columns?: number } = {}) {
  const stdout = Object.assign(new PassThrough(), options.columns ? { isTTY: true, columns: options.columns } : {});
  const stderr = new PassThrough();
  const out = { stdout: '', stderr: '' };
  stdout.on('data', (c: Buffer) => (out.stdout += c.toString()));
  stderr.on('data', (c: Buffer) => (out.stderr += c.toString()));
  const stdin = options.stdin === undefined ? undefined : Readable.from([options.stdin]);
  const code = await main(argv, { stdout, stderr, ...(stdin ? { stdin } : {}) });
  return { code, ...out };
}
const api = (...argv: string[]) => run(['api', ...argv, '--url', server.url, '--key', server.keys[0]]);
const sdk = () => createClient({ baseUrl: server.url, apiKey: server.keys[0] });

describe('every record', () => {
  it('assets --all -o ndjson: one line per asset of the tenant', async () => {
    const { meta } = await sdk().assets.list({ perPage: 1 });
    const { code, stdout, stderr } = await api('assets', '--all', '-o', 'ndjson');
    expect(code, stderr).toBe(0);
    const lines = stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(meta.total);
    expect(new Set(lines.map((l) => (JSON.parse(l) as { id: string }).id)).size).toBe(meta.total);
  });

  it('risks --all in json, csv and yaml: the same risks, each once', async () => {
    const { meta } = await sdk().risks.list({ perPage: 1 });
    const json: { id: string }[] = JSON.parse((await api('risks', '--all', '-o', 'json')).stdout);
    expect(new Set(json.map((r) => r.id)).size).toBe(meta.total);
    const csv = parseCsv<Record<string, string>>(
      (await api('risks', '--all', '-o', 'csv', '--fields', 'id,score,meta.assetName')).stdout,
      { columns: true },
    );
    expect(Object.keys(csv[0]!)).toEqual(['id', 'score', 'meta.assetName']);
    expect(csv.map((r) => r.id)).toEqual(json.map((r) => r.id));
    const yaml = parseYaml((await api('risks', '--all', '-o', 'yaml', '--fields', 'id')).stdout) as unknown[];
    expect(yaml).toEqual(json.map((r) => ({ id: r.id })));
  });

  it('filters as flags, a list flag repeated or a comma list', async () => {
    const expected = (
      await sdk().vulnerabilities.list({ severityLevels: ['CRITICAL', 'HIGH'], hasKev: true, perPage: 1 })
    ).meta as { total: number };
    for (const flags of [
      ['--severity-levels', 'CRITICAL', '--severity-levels', 'HIGH'],
      ['--severity-levels', 'critical,high'],
    ]) {
      const { stdout } = await api('vulnerabilities', '--all', '-o', 'ndjson', '--has-kev', 'true', ...flags);
      const findings = stdout
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l) as { severityLevel: string });
      expect(findings).toHaveLength(expected.total);
      expect(new Set(findings.map((f) => f.severityLevel))).toEqual(new Set(['CRITICAL', 'HIGH']));
    }
  });

  it('every parameter of the list has its flag', async () => {
    const { stdout } = await run(['api', 'vulnerabilities', '--help']);
    for (const name of Object.keys(listVulnerabilitiesSpec.params).filter((p) => p !== 'format'))
      expect(stdout).toContain(`--${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} `);
  });
});

describe('one page, one asset', () => {
  it('a table fits the terminal; the next page is named on stderr', async () => {
    const { code, stdout, stderr } = await run(
      ['api', 'assets', '--per-page', '30', '--url', server.url, '--key', server.keys[0]],
      { columns: 80 },
    );
    expect(code, stderr).toBe(0);
    const lines = stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(31);
    expect(lines[0]).toMatch(/^name\s+provider\s+resourceType/);
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(80);
    expect(stderr).toMatch(/page 1 of \d+; \d+ in all; next: --page 2/);
  });

  it('json of a page is the answer itself, meta and all; a risk page names its cursor', async () => {
    const page = JSON.parse((await api('risks', '--per-page', '3', '-o', 'json')).stdout);
    expect(page.data).toHaveLength(3);
    const next = await api('risks', '--per-page', '3', '-o', 'json', '--cursor', page.meta.cursor);
    expect(JSON.parse(next.stdout).data[0].id).not.toBe(page.data[0].id);
  });

  it('asset ID: one asset, any format', async () => {
    const [first] = (await sdk().assets.list({ perPage: 1 })).data;
    const json = JSON.parse((await api('asset', first!.id, '--include', 'rawData', '-o', 'json')).stdout);
    expect(json.id).toBe(first!.id);
    expect(json).toHaveProperty('rawData');
    expect((await api('asset', first!.id, '-o', 'table', '--fields', 'id,name')).stdout).toMatch(
      new RegExp(`^field\\s+value\\nid\\s+${first!.id.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}\\nname\\s+`),
    );
  });
});

describe('configuration', () => {
  it('configure writes a profile private to the user, the key read from standard input and never printed', async () => {
    const key = server.keys[0];
    const saved = await run(['api', 'configure', '--profile', 'ci', '--url', server.url], { stdin: `${key}\n` });
    expect(saved.code, saved.stderr).toBe(0);
    expect(saved.stdout + saved.stderr).not.toContain(key);
    expect(statSync(configFile).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(configFile, 'utf8'))).toEqual({ profiles: { ci: { url: server.url, key } } });
    const used = await run(['api', 'risks', '--profile', 'ci', '--per-page', '1', '-o', 'ndjson']);
    expect(used.code, used.stderr).toBe(0);
    expect(used.stderr).not.toContain('warning');
    chmodSync(configFile, 0o644);
    const warned = await run(['api', 'risks', '--profile', 'ci', '--per-page', '1', '-o', 'ndjson']);
    expect(warned.code).toBe(0);
    expect(warned.stderr).toContain(`warning: ${configFile}`);
    expect(warned.stderr).toContain('chmod 600');
  });

  it('the environment, when no flag or named profile says otherwise', async () => {
    vi.stubEnv('SECINV_URL', server.url);
    vi.stubEnv('SECINV_API_KEY', server.keys[1]);
    const { code, stdout } = await run(['api', 'assets', '--per-page', '1', '-o', 'json']);
    expect(code).toBe(0);
    expect(JSON.parse(stdout).data[0].tenantId).toBe(server.tenants[1]);
  });
});

describe('the change log', () => {
  const created = { types: ['asset.created'] } as const;
  let made = 0;
  /** Imports a new asset of the first tenant (its write appends its asset.created); its id. */
  const newAsset = async (): Promise<string> => {
    const id = `sirn:assets:${server.tenants[0]}:test:cli-${++made}`;
    expect((await importRecords(server.storage, [assetRecord(id, { tenantId: server.tenants[0] })])).problems).toEqual(
      [],
    );
    return id;
  };
  const endOf = async (filters: ChangeListParams = {}): Promise<string> => {
    const feed = sdk().changes.all(filters);
    for await (const _ of feed);
    return feed.cursor!;
  };
  const nextCursor = (stderr: string): string => /^next: --cursor (\S+)$/m.exec(stderr)?.[1] ?? 'none';

  it('changes: every change since --cursor, and on stderr the cursor to go on from', async () => {
    const start = await endOf();
    const id = await newAsset();
    const { code, stdout, stderr } = await api('changes', '--cursor', start, '-o', 'ndjson');
    expect(code, stderr).toBe(0);
    const lines = stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Change);
    expect(lines.filter((c) => c.type === 'asset.created').map((c) => c.assetId)).toEqual([id]);
    const feed = sdk().changes.all({ cursor: start });
    const listed: Change[] = [];
    for await (const change of feed) listed.push(change);
    expect(lines).toEqual(listed);
    expect(nextCursor(stderr)).toBe(feed.cursor);
    // From there: nothing yet, and the same cursor (JSON, as other lists print off a terminal).
    const again = await api('changes', '--cursor', nextCursor(stderr));
    expect(again.stdout).toBe('[]\n');
    expect(nextCursor(again.stderr)).toBe(feed.cursor);
    // Filters are flags; a table of the default columns.
    const table = await run(
      [
        'api',
        'changes',
        '--types',
        'asset.created',
        '--since',
        lines[0]!.at,
        '--url',
        server.url,
        '--key',
        server.keys[0],
      ],
      { columns: 200 },
    );
    expect(table.stdout).toMatch(/^at\s+type\s+vulnerabilityId\s+riskId\s+fields\s+cause\.kind\s+assetId\n/);
    expect(table.stdout).toContain(id);
  });

  it('changes --follow prints each change as a line as it is written; SIGTERM ends it with exit 0', async () => {
    const start = await endOf(created);
    const child = spawnCli([
      'api',
      'changes',
      '--follow',
      '--interval',
      '0.2',
      '--types',
      'asset.created',
      '--cursor',
      start,
      '--url',
      server.url,
      '--key',
      server.keys[0],
    ]);
    let stdout = '';
    let stderr = '';
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
    /** The first n complete lines, once they are there. */
    const lines = async (n: number): Promise<string[]> => {
      await expect
        .poll(() => stdout.split('\n').length - 1, { timeout: 15_000, interval: 50 })
        .toBeGreaterThanOrEqual(n);
      return stdout.split('\n').slice(0, n);
    };
    const first = await newAsset();
    expect(JSON.parse((await lines(1))[0]!)).toMatchObject({ type: 'asset.created', assetId: first });
    // A later write, a later line: the follower goes on.
    const second = await newAsset();
    const both = (await lines(2)).map((l) => JSON.parse(l) as Change);
    expect(both.map((c) => c.assetId)).toEqual([first, second]);
    expect(await exitCodeAfter(child, 'SIGTERM'), stderr).toBe(0);
    expect(stdout.split('\n')).toHaveLength(3);
    // The position it stopped at is past both.
    expect((await sdk().changes.list({ ...created, cursor: nextCursor(stderr) })).data).toEqual([]);
  });

  it('bad flags: exit 1 naming the flag', async () => {
    for (const [argv, named] of [
      [['--follow', '--interval', '0'], '--interval'],
      [['--follow', '--interval', 'soon'], '--interval'],
      [['--interval', '5'], '--interval'],
      [['--follow', '-o', 'csv'], '--follow'],
      [['--types', 'asset.nope'], 'types'],
      [['--since', 'yesterday'], 'since'],
      [['--cursor', 'not-a-cursor'], 'cursor'],
      [['--per-page', '5000'], 'perPage'],
    ] as const) {
      const { code, stderr } = await api('changes', ...argv);
      expect(code, argv.join(' ')).toBe(1);
      expect(stderr, argv.join(' ')).toContain(named);
    }
  });
});

describe('metrics', () => {
  it('metrics findings and remediation print what the client reads, as JSON or one row per severity', async () => {
    const findings = await api(
      'metrics',
      'findings',
      '--from',
      '2024-01-01',
      '--to',
      '2024-03-31',
      '--interval',
      'month',
    );
    expect(findings.code, findings.stderr).toBe(0);
    const expected = await sdk().metrics.findings({ from: '2024-01-01', to: '2024-03-31', interval: 'month' });
    expect(JSON.parse(findings.stdout)).toEqual(expected);
    expect(expected.data).toHaveLength(3);
    const rows = await api(
      'metrics',
      'findings',
      '--from',
      '2024-01-01',
      '--to',
      '2024-01-31',
      '--interval',
      'month',
      '-o',
      'ndjson',
    );
    const lines = rows.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((l) => l.severityLevel)).toEqual([
      'CRITICAL',
      'HIGH',
      'MEDIUM',
      'LOW',
      'INFORMATIONAL',
      'UNKNOWN',
    ]);
    expect(lines[0]).toEqual({
      start: '2024-01-01',
      end: '2024-01-31',
      severityLevel: 'CRITICAL',
      ...expected.data[0]!.severities.CRITICAL,
    });
    const remediation = await api('metrics', 'remediation', '-o', 'json');
    expect(remediation.code, remediation.stderr).toBe(0);
    expect(JSON.parse(remediation.stdout)).toEqual(await sdk().metrics.remediation());
  });

  it("refuses an unknown metric, an interval for remediation, and passes on the server's 400", async () => {
    const unknown = await api('metrics', 'trends');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("the metrics are findings or remediation, not 'trends'");
    const interval = await api('metrics', 'remediation', '--interval', 'week');
    expect(interval.code).toBe(1);
    expect(interval.stderr).toContain('--interval');
    const backwards = await api('metrics', 'findings', '--from', '2026-03-01', '--to', '2026-02-01');
    expect(backwards.code).toBe(1);
    expect(backwards.stderr).toContain('from must not be after to');
  });
});

describe('failures', () => {
  it('nothing configured: names the flags, the variables and the profiles file', async () => {
    const { code, stderr } = await run(['api', 'risks']);
    expect(code).toBe(1);
    for (const word of ['--url', 'SECINV_URL', '--key', 'SECINV_API_KEY', configFile]) expect(stderr).toContain(word);
  });

  it('an unknown profile', async () => {
    const { code, stderr } = await run(['api', 'risks', '--profile', 'nowhere']);
    expect(code).toBe(1);
    expect(stderr).toContain("unknown profile 'nowhere'");
  });

  it('a refused key: said, the key not printed', async () => {
    const { code, stderr, stdout } = await run(['api', 'risks', '--url', server.url, '--key', 'secinv_refused-key']);
    expect(code).toBe(1);
    expect(stderr).toContain('refused the API key from --key (401 unauthorized)');
    expect(stderr + stdout).not.toContain('secinv_refused-key');
  });

  it('a 400: every problem the server listed', async () => {
    const { code, stderr } = await api('assets', '--risk-score-gte', '11', '--first-observed-at-start', 'soon');
    expect(code).toBe(1);
    expect(stderr).toMatch(/^firstObservedAtStart: .*\nriskScoreGte: .*\n.*rejected the request: 2 problems/m);
  });

  it('a server that is not there: exit 1 naming the URL', async () => {
    const url = await closedPort();
    const { code, stderr } = await run(['api', 'risks', '--url', url, '--key', 'k', '--timeout', '5']);
    expect(code).toBe(1);
    expect(stderr).toContain(`cannot reach ${url}`);
  });

  it('--all with a paging flag is refused before any request', async () => {
    const { code, stderr } = await api('vulnerabilities', '--all', '--per-page', '5');
    expect(code).toBe(1);
    expect(stderr).toContain('--per-page');
  });
});

describe('a server without exports', () => {
  it('--all walks the pages when the server refuses the format parameter', async () => {
    const seen: string[] = [];
    const old = createServer((request, response) => {
      const url = new URL(request.url!, 'http://x');
      seen.push(url.search);
      if (url.searchParams.has('format')) {
        response.writeHead(400, { 'content-type': 'application/json' });
        return response.end(
          JSON.stringify({ errors: [{ code: 'unknown_parameter', field: 'format', message: 'unknown' }] }),
        );
      }
      const page = Number(url.searchParams.get('page'));
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({ data: [{ id: `a${page}` }], meta: { page, perPage: 1, total: 2, hasNextPage: page < 2 } }),
      );
    });
    await new Promise<void>((resolve) => old.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(old.address() as AddressInfo).port}`;
      const { code, stdout } = await run(['api', 'assets', '--all', '-o', 'ndjson', '--url', url, '--key', 'k']);
      expect(code).toBe(0);
      expect(stdout).toBe('{"id":"a1"}\n{"id":"a2"}\n');
      expect(seen[0]).toContain('format=ndjson');
    } finally {
      old.close();
    }
  });
});
