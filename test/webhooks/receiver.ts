// The tests' side of test/webhooks/receiver-process.js: a receiver process on a loopback port, what it got (its log file,
// which outlives it), how each of its endpoints answers; endpoints made on the database as `webhooks create` makes
// them; and waiting for what a server sends.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { newWebhookId, newWebhookSecret, NO_FILTERS, type WebhookFilters } from '../../src/domain/webhooks.js';
import type { Storage } from '../../src/storage/index.js';
import { afterAll, beforeAll } from 'vitest';
import type { Change } from '../changes.js';
import { fixture } from '../fixtures.js';
import { createKey, openStorageWithKeys, TENANT_A, type TestStorage } from '../helpers.js';
import { exitCodeAfter, spawnServe } from '../http/serve-process.js';
import { call, endedScan, uploadReport, type Scan } from '../http/scan-processes.js';

const SCRIPT = fileURLToPath(new URL('./receiver-process.js', import.meta.url));

/** One request the receiver got, as it logged it. */
export interface Received {
  name: string;
  arrivedAt: number;
  pid: number;
  id: string | null;
  timestamp: string | null;
  contentType: string | null;
  verified: boolean;
  problem: string | null;
  answered: number;
  body: { type: string; tenantId?: string; changes?: Change[] } | null;
}

export interface Answer {
  status: number;
  delayMs?: number;
  location?: string;
}

export interface Receiver {
  port: number;
  child: ChildProcess;
  url(name: string): string;
  /** Sets an endpoint's secret and how it answers: `answers` in turn, then `then` (default 200). */
  control(name: string, settings: EndpointSettings): Promise<void>;
  /** What the endpoint got so far, in arrival order (every life of the receiver on this log). */
  received(name: string): Received[];
  /** Ends the process (SIGKILL: a receiver that went away). */
  kill(): Promise<void>;
}

/** Settings of an endpoint, as `control` sets them. */
export interface EndpointSettings {
  secret?: string;
  answers?: Answer[];
  then?: Answer;
}

/**
 * Starts a receiver on `port` (0: any) logging to `log` (by default a new file in `dir`), its endpoints having
 * `settings` from its first request on.
 */
export async function startReceiver(
  dir: string,
  port = 0,
  log = join(dir, `received-${Date.now()}.jsonl`),
  settings: Record<string, EndpointSettings> = {},
): Promise<Receiver> {
  const child = spawn(process.execPath, [SCRIPT, String(port), log, JSON.stringify(settings)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
  const listening = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (c: Buffer) => {
      out += c.toString();
      const found = /listening (\d+)/.exec(out);
      if (found) resolve(Number(found[1]));
    });
    child.once('exit', () => reject(new Error(`the receiver exited: ${stderr}`)));
  });
  child.removeAllListeners('exit');
  const base = `http://127.0.0.1:${listening}`;
  return {
    port: listening,
    child,
    url: (name) => `${base}/${name}`,
    control: async (name, settings) => {
      const response = await fetch(`${base}/_control/${name}`, { method: 'POST', body: JSON.stringify(settings) });
      if (response.status !== 204) throw new Error(`control answered ${response.status}`);
    },
    received: (name) => {
      if (!existsSync(log)) return [];
      // A line the receiver is still writing (a large body lands in several writes) is read on the next poll.
      const text = readFileSync(log, 'utf8');
      return text
        .slice(0, text.lastIndexOf('\n') + 1)
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Received)
        .filter((r) => r.name === name);
    },
    kill: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    },
  };
}

/** Polls until `check` returns something other than undefined, or fails after `timeoutMs` saying what it waited for. */
export async function waitFor<T>(
  what: string,
  check: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 20_000,
): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Creates an endpoint on the database as `webhooks create` does; its id and secret. */
export async function createEndpoint(
  storage: Storage,
  tenantId: string,
  url: string,
  filters: Partial<WebhookFilters> = {},
): Promise<{ id: string; secret: string }> {
  const id = newWebhookId();
  const secret = newWebhookSecret();
  await storage.createWebhook({
    id,
    tenantId,
    url,
    description: null,
    filters: { ...NO_FILTERS, ...filters },
    secret,
    createdAt: new Date().toISOString(),
  });
  return { id, secret };
}

/** The changes of the deliveries received, by first arrival of each webhook-id (a receiver's deduplication). */
export function deduplicated(received: readonly Received[]): { ids: string[]; changes: Change[] } {
  const seen = new Set<string>();
  const changes: Change[] = [];
  for (const r of received) {
    if (r.id === null || seen.has(r.id) || r.body?.type !== 'changes') continue;
    seen.add(r.id);
    changes.push(...(r.body.changes ?? []));
  }
  return { ids: [...seen], changes };
}

/** Uploads the kill tests' report (test/http/scan-processes.ts) as a new asset in `region` and waits for its end. */
export async function uploadScan(base: string, ingestKey: string, region: string): Promise<Scan> {
  const upload = await uploadReport(base, ingestKey, region, region);
  if (upload.status !== 202) throw new Error(`the upload answered ${upload.status}`);
  const scan = await endedScan(base, ingestKey, upload.location!);
  if (scan.status !== 'succeeded') throw new Error(`the scan ended ${scan.status}`);
  return scan;
}

/** Every change a scan made, as the change log serves it. */
export async function scanChanges(base: string, readKey: string, scan: Scan): Promise<Change[]> {
  const page = await call(base, readKey, `/v1/tenant/scans/${String(scan.id)}/changes?perPage=1000`);
  return page.body.data as unknown as Change[];
}

/** Waits until the endpoint received (deduplicated) at least `count` changes, and returns them. */
export const receivedChanges = (receiver: Receiver, name: string, count: number, timeoutMs?: number) =>
  waitFor(
    `${count} changes at ${name}`,
    () => {
      const { changes } = deduplicated(receiver.received(name));
      return changes.length >= count ? changes : undefined;
    },
    timeoutMs,
  );

/** What a test file's server and receiver are (filled before its tests run). */
export interface Served {
  admin: TestStorage;
  dir: string;
  receiver: Receiver;
  /** The server's URL. */
  base: string;
  readKey: string;
  ingestKey: string;
}

/**
 * One `secinv serve` (with `env`) for a test file, on a database with the fixture, and a receiver: started before its
 * tests, removed after them.
 */
export function servedWithReceiver(env: Record<string, string>): Served {
  const served = {} as Served;
  let server: ChildProcess;
  beforeAll(async () => {
    const { opened, keys } = await openStorageWithKeys(fixture, [TENANT_A]);
    served.admin = opened;
    served.readKey = keys[0];
    served.ingestKey = await createKey(opened.storage, TENANT_A, { scopes: ['ingest'] });
    served.dir = mkdtempSync(join(tmpdir(), 'secinv-webhooks-'));
    served.receiver = await startReceiver(served.dir);
    const started = await spawnServe(opened.url, env);
    server = started.child;
    served.base = `http://127.0.0.1:${started.port}`;
  }, 60_000);
  afterAll(async () => {
    await exitCodeAfter(server, 'SIGTERM');
    await served.receiver.kill();
    await served.admin.dispose();
    rmSync(served.dir, { recursive: true, force: true });
  });
  return served;
}
