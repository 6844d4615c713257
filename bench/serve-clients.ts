// What the benchmarks of a running `secinv serve` share (bench/scans.ts, bench/webhooks.ts): the reading client in a
// process of its own (bench/page-reader.ts), the server's CPU and peak memory read from /proc, uploads from a file,
// waiting on a scan, and the latency summary.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createReadStream, readFileSync, statSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { fileURLToPath } from 'node:url';

/** The reading client: pages 1 to 100 in turn, one request at a time; prints `at latency` (ms) per request. */
export async function readPages(base: string): Promise<void> {
  const key = await new Promise<string>((resolve) =>
    process.stdin.once('data', (c: Buffer) => resolve(c.toString().trim())),
  );
  let open = true;
  process.stdin.on('end', () => (open = false)).resume();
  for (let page = 1; open; page = (page % 100) + 1) {
    const started = performance.now();
    const res = await fetch(`${base}/v1/tenant/assets?page=${page}`, { headers: { authorization: `Bearer ${key}` } });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`page ${page}: ${res.status}`);
    process.stdout.write(`${Date.now()} ${(performance.now() - started).toFixed(2)}\n`);
  }
}

/** Starts the reading client (bench/page-reader.ts). */
export function startReader(base: string, key: string) {
  const script = fileURLToPath(new URL('./page-reader.ts', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', script, base], { stdio: ['pipe', 'pipe', 'inherit'] });
  const samples: { at: number; ms: number }[] = [];
  let answered: () => void;
  const ready = new Promise<void>((resolve) => (answered = resolve));
  let rest = '';
  child.stdout.on('data', (chunk: Buffer) => {
    const lines = (rest + chunk.toString()).split('\n');
    rest = lines.pop()!;
    for (const line of lines) {
      const [at, ms] = line.split(' ');
      samples.push({ at: Number(at), ms: Number(ms) });
      answered();
    }
  });
  child.stdin.write(`${key}\n`);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    samples,
    /** Once it was answered: it has started (tsx takes a few seconds), and is reading. */
    ready,
    /** The latencies of the requests answered between two times (ms since the epoch). */
    between: (from: number, to: number) => samples.filter((s) => s.at >= from && s.at <= to).map((s) => s.ms),
    stop: async () => {
      child.stdin.end();
      await exited;
    },
  };
}

const ticks = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim());

/** User + system seconds of a process and its threads so far. */
export function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / ticks;
}

/** The kernel's high-water mark of the process's resident memory, in MB; `reset` starts it again from now. */
export const peakRss = (pid: number): number =>
  Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024;
export const resetPeak = (pid: number): void => writeFileSync(`/proc/${pid}/clear_refs`, '5');

/** Uploads a file as a stream (its length known); resolves with the scan's Location once answered. */
export function uploadFile(base: string, key: string, path: string, query: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}/v1/tenant/scans?${query}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        'content-length': String(statSync(path).size),
      },
    });
    req.once('response', (res) => {
      res.resume();
      if (res.statusCode !== 202) reject(new Error(`upload ${path}: ${res.statusCode}`));
      else resolve(res.headers.location!);
    });
    req.once('error', reject);
    createReadStream(path, { highWaterMark: 1024 * 1024 }).pipe(req);
  });
}

export interface Scan {
  id: string;
  status: string;
  submittedAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  problems: unknown[];
}

/** Looks at the scan every `everyMs` until it ended; `succeeded` or throws. */
export async function ended(base: string, key: string, location: string, everyMs: number): Promise<Scan> {
  for (;;) {
    const res = await fetch(`${base}${location}`, { headers: { authorization: `Bearer ${key}` } });
    const scan = ((await res.json()) as { data: Scan }).data;
    if (scan.status === 'failed') throw new Error(`scan failed: ${JSON.stringify(scan.problems)}`);
    if (scan.status === 'succeeded') return scan;
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

export const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? NaN;
};
export const latencies = (xs: number[]) =>
  `p50 ${quantile(xs, 0.5).toFixed(1)} ms, p99 ${quantile(xs, 0.99).toFixed(1)} ms, slowest ${Math.max(...xs).toFixed(0)} ms (${xs.length} requests)`;

export const stop = (child: ChildProcess): Promise<void> =>
  new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
