// The built `secinv serve` (bin/secinv.js) in a process of its own, as a deployment starts it, for the benchmarks
// that measure the command (bench/http.ts, bench/scans.ts).
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** Resolves with the child and the port once `stream` has printed a line that `pattern` finds it in. */
export function listening(
  child: ChildProcess,
  stream: NodeJS.ReadableStream,
  pattern: RegExp,
  what: string,
): Promise<{ child: ChildProcess; port: number }> {
  return new Promise((resolve, reject) => {
    let out = '';
    stream.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const port = pattern.exec(out)?.[1];
      if (port !== undefined) resolve({ child, port: Number(port) });
    });
    child.once('exit', (code) => reject(new Error(`${what} exited with ${code}: ${out}`)));
  });
}

/**
 * Starts `secinv serve` over the database, on loopback, no rate limit, logs at `warn`, with `env` added; `prefix` runs
 * it through another command (`taskset -c 0`). Resolves once it prints the address it listens on.
 */
export function startServeCommand(
  url: string,
  env: Record<string, string> = {},
  prefix: string[] = [],
): Promise<{ child: ChildProcess; port: number }> {
  const bin = fileURLToPath(new URL('../bin/secinv.js', import.meta.url));
  const [command, ...args] = [...prefix, process.execPath, bin, 'serve'];
  const child = spawn(command, args, {
    env: {
      ...process.env,
      SECINV_DATABASE_URL: url,
      SECINV_HOST: '127.0.0.1',
      SECINV_PORT: '0',
      SECINV_LOG_LEVEL: 'warn',
      SECINV_RATE_LIMIT_PER_MINUTE: '0',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  return listening(child, child.stderr, /serving https?:\/\/[^ ]+:(\d+)/, 'secinv serve');
}
