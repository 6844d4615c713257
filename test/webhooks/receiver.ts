// The tests' side of test/webhooks/receiver.js: a receiver process on a loopback port, what it got (its log file,
// which outlives it), how each of its endpoints answers; endpoints made on the database as `webhooks create` makes
// them; and waiting for what a server sends.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { newWebhookId, newWebhookSecret, NO_FILTERS, type WebhookFilters } from '../../src/domain/webhooks.js';
import type { Storage } from '../../src/storage/index.js';
import type { Change } from '../changes.js';

const SCRIPT = fileURLToPath(new URL('./receiver.js', import.meta.url));

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
  control(name: string, settings: { secret?: string; answers?: Answer[]; then?: Answer }): Promise<void>;
  /** What the endpoint got so far, in arrival order (every life of the receiver on this log). */
  received(name: string): Received[];
  /** Ends the process (SIGKILL: a receiver that went away). */
  kill(): Promise<void>;
}

/** Starts a receiver on `port` (0: any) logging to `log` (by default a new file in `dir`). */
export async function startReceiver(
  dir: string,
  port = 0,
  log = join(dir, `received-${Date.now()}.jsonl`),
): Promise<Receiver> {
  const child = spawn(process.execPath, [SCRIPT, String(port), log], { stdio: ['ignore', 'pipe', 'pipe'] });
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
    received: (name) =>
      existsSync(log)
        ? readFileSync(log, 'utf8')
            .split('\n')
            .filter((line) => line !== '')
            .map((line) => JSON.parse(line) as Received)
            .filter((r) => r.name === name)
        : [],
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
