// Alerts end to end (pipeline.md §5) on a real `secinv serve` and a real receiver process on a loopback port, which
// verifies each delivery's signature with the standardwebhooks package: an endpoint made by `secinv webhooks create`
// gets a scan's changes, signed, as the change log serves them; a KEV feed load alerts an endpoint filtered with
// --kev; the commands list, ping, disable, enable and delete endpoints, and refuse bad input naming the flag.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TENANT_A } from '../helpers.js';
import { kevCatalog } from '../feeds/kev-catalog.js';
import { runCli } from '../http/serve-process.js';
import { endedScan, uploadReport, type Scan } from '../http/scan-processes.js';
import {
  deduplicated,
  receivedChanges as waitForChanges,
  scanChanges as changesOf,
  servedWithReceiver,
  waitFor,
} from './receiver.js';

const ALLOW = { SECINV_WEBHOOK_ALLOW_PRIVATE: 'true' };

const served = servedWithReceiver(ALLOW);

const cli = (args: string[], env: Record<string, string> = ALLOW) => runCli([...args, '--db', served.admin.url], env);

/** `secinv webhooks create …`: its id and secret, the receiver told the secret. */
async function create(name: string, flags: string[] = []): Promise<{ id: string; secret: string }> {
  const run = await cli(['webhooks', 'create', '--tenant', TENANT_A, '--url', served.receiver.url(name), ...flags]);
  expect(run.stderr).toContain('the signing secret is shown only once');
  expect(run.code).toBe(0);
  const [id = '', secret = ''] = run.stdout.trim().split('\n');
  expect(id).toMatch(/^wh_[0-9a-f]{16}$/);
  expect(secret).toMatch(/^whsec_/);
  await served.receiver.control(name, { secret });
  return { id, secret };
}

const scanChanges = (scan: Scan) => changesOf(served.base, served.readKey, scan);
const receivedChanges = (name: string, count: number) => waitForChanges(served.receiver, name, count);

describe('alerts from a real server', () => {
  it("sends a scan's changes, signed, in order, as the change log serves them", async () => {
    const all = await create('all', ['--description', 'everything']);
    const upload = await uploadReport(served.base, served.ingestKey, 'alerts-1', 'alerts-1');
    expect(upload.status).toBe(202);
    const scan = await endedScan(served.base, served.ingestKey, upload.location!);
    expect(scan.status).toBe('succeeded');
    const expected = await scanChanges(scan);
    expect(expected.length).toBeGreaterThan(5);
    const changes = await receivedChanges('all', expected.length);
    expect(changes).toEqual(expected);

    const got = served.receiver.received('all');
    expect(got.every((r) => r.verified && r.answered === 200)).toBe(true);
    expect(got[0]).toMatchObject({ contentType: 'application/json', body: { type: 'changes', tenantId: TENANT_A } });
    expect(got[0]!.id).toMatch(new RegExp(`^msg_${all.id}_\\d+_\\d+$`));
    const latency = got[0]!.arrivedAt - Date.parse(scan.finishedAt!);
    // From the scan's commit to the delivery's arrival (pipeline.md §5 asks p99 under 2 s of a bench).
    console.info(`webhook latency from the scan's end to the first delivery: ${latency} ms`);
    expect(latency).toBeLessThan(10_000);

    const deliveries = await cli(['webhooks', 'deliveries', all.id, '--json']);
    expect(deliveries.code).toBe(0);
    const attempts = JSON.parse(deliveries.stdout) as { deliveryId: string; status: number; changes: number }[];
    expect(attempts.map((a) => [a.deliveryId, a.status, a.changes])).toEqual(
      got.map((r) => [r.id, 200, r.body!.changes!.length]).reverse(),
    );
    const listed = JSON.parse((await cli(['webhooks', 'list', '--tenant', TENANT_A, '--json'])).stdout) as {
      id: string;
      description: string;
      position: number;
      pending: unknown;
    }[];
    expect(listed.find((h) => h.id === all.id)).toMatchObject({
      description: 'everything',
      position: Number(expected.at(-1)!.seq),
      pending: null,
    });
  });

  it('a KEV feed load that makes a finding KEV alerts an endpoint filtered with --kev, with that change alone', async () => {
    const kev = await create('kev', ['--kev']);
    const file = join(served.dir, 'kev.json');
    writeFileSync(file, kevCatalog('2026.11.20', ['CVE-2020-15999']));
    const load = await cli(['feeds', 'load', '--quiet', file]);
    expect(load.code, load.stderr).toBe(0);
    const [change] = await receivedChanges('kev', 1);
    expect(change).toMatchObject({
      type: 'finding.updated',
      vulnerabilityId: 'CVE-2020-15999',
      cause: { kind: 'feed', feed: 'kev', feedVersion: '2026.11.20' },
      fields: [{ name: 'hasKev', before: false, after: true }],
      record: { vulnerabilityId: 'CVE-2020-15999', hasKev: true },
    });
    // Every change the load made went to the unfiltered endpoint; to this one only its KEV findings.
    const all = await waitFor('the feed load at all', () => {
      const feed = deduplicated(served.receiver.received('all')).changes.filter((c) => c.cause.kind === 'feed');
      return feed.some((c) => c.vulnerabilityId === 'CVE-2020-15999') ? feed : undefined;
    });
    const kevChanges = deduplicated(served.receiver.received('kev')).changes;
    expect(kevChanges).toEqual(all.filter((c) => c.type.startsWith('finding.') && c.record?.hasKev === true));
    expect(served.receiver.received('kev').every((r) => r.verified)).toBe(true);
    await cli(['webhooks', 'delete', kev.id]);
  });

  // Hundreds of requests (or commands) in one test: on PostgreSQL beside three other files, past the default 30 s.
  it('pings, disables (changes wait), enables (they are sent), deletes', async () => {
    const hook = await create('ops', ['--types', 'asset.created,finding.opened', '--min-severity', 'high']);
    const ping = await cli(['webhooks', 'test', hook.id]);
    expect(ping.code, ping.stderr).toBe(0);
    expect(ping.stdout).toMatch(/^ping msg_ping_[0-9a-f]+: HTTP 200 in \d+ ms\n$/);
    expect(served.receiver.received('ops')).toMatchObject([{ verified: true, body: { type: 'ping' } }]);

    expect((await cli(['webhooks', 'disable', hook.id, '--reason', 'maintenance'])).code).toBe(0);
    const listed = (await cli(['webhooks', 'list'])).stdout;
    expect(listed).toMatch(
      new RegExp(`${hook.id} .*types=asset.created,finding.opened min-severity=HIGH .*disabled .*: maintenance`),
    );
    const scan = await endedScan(
      served.base,
      served.ingestKey,
      (await uploadReport(served.base, served.ingestKey, 'alerts-2', 'alerts-2')).location!,
    );
    const wanted = (await scanChanges(scan)).filter(
      (c) =>
        c.type === 'asset.created' ||
        (c.type === 'finding.opened' && ['CRITICAL', 'HIGH'].includes(String(c.record?.severityLevel))),
    );
    expect(wanted.length).toBeGreaterThan(1);
    // Sent to the others meanwhile, not to this one.
    await receivedChanges('all', (await scanChanges(scan)).length);
    expect(served.receiver.received('ops')).toHaveLength(1);

    expect((await cli(['webhooks', 'enable', hook.id])).code).toBe(0);
    expect(await receivedChanges('ops', wanted.length)).toEqual(wanted);
    const deliveries = (await cli(['webhooks', 'deliveries', hook.id])).stdout.split('\n');
    expect(deliveries[0]).toMatch(/^AT +DELIVERY +KIND +CHANGES +STATUS +DURATION +ERROR$/);
    expect(deliveries.some((line) => / ping +0 +200 /.test(line))).toBe(true);

    expect((await cli(['webhooks', 'delete', hook.id])).code).toBe(0);
    expect((await cli(['webhooks', 'list', '--json'])).stdout).not.toContain(hook.id);
    const gone = await cli(['webhooks', 'test', hook.id]);
    expect({ code: gone.code, stderr: gone.stderr }).toEqual({
      code: 1,
      stderr: expect.stringContaining(`no webhook with id '${hook.id}'`),
    });
  }, 90_000);

  it('refuses bad input, naming the flag', async () => {
    const create = (flags: string[], env: Record<string, string> = ALLOW) =>
      cli(['webhooks', 'create', '--tenant', TENANT_A, ...flags], env);
    const url = served.receiver.url('never');
    const runs = await Promise.all([
      create(['--url', 'ftp://example.com/hook']),
      create(['--url', url], {}),
      create(['--url', 'http://169.254.169.254/latest'], {}),
      create(['--url', url, '--types', 'finding.opened,finding.exploded']),
      create(['--url', url, '--min-severity', 'severe']),
      cli(['webhooks', 'create', '--tenant', '99999999-9999-4999-8999-999999999999', '--url', url]),
    ]);
    const lines = runs.map((r) => ({ code: r.code, error: r.stderr.trim().split('\n').at(-1) }));
    expect(lines).toEqual([
      { code: 1, error: 'secinv: --url: must be http:// or https://, not ftp:' },
      {
        code: 1,
        error: 'secinv: --url: 127.0.0.1 is a loopback address (set SECINV_WEBHOOK_ALLOW_PRIVATE=true to allow it)',
      },
      {
        code: 1,
        error:
          'secinv: --url: 169.254.169.254 is a metadata address (set SECINV_WEBHOOK_ALLOW_PRIVATE=true to allow it)',
      },
      { code: 1, error: expect.stringMatching(/^secinv: --types: unknown change type 'finding.exploded'/) },
      { code: 1, error: expect.stringMatching(/^secinv: --min-severity: unknown severity 'severe'/) },
      { code: 1, error: expect.stringMatching(/^secinv: --tenant: unknown tenant/) },
    ]);
    expect(runs.every((r) => r.stdout === '')).toBe(true);
    expect(served.receiver.received('never')).toEqual([]);
  });
});
