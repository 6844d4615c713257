// `secinv` in a process of its own, bundled from the sources as the build bundles it, for tests of what only a real
// process shows (signals, connections queued in the listen backlog, a process killed in the middle of a write).
import { spawn, type ChildProcess } from 'node:child_process';
import { inject } from 'vitest';

/**
 * Runs `secinv ARGS…` (the bundle test/global-setup.ts makes once per run); its stdout and stderr are piped. A serve
 * is one process unless `env` asks for more (SECINV_WORKERS): the suite starts many on two cores.
 */
export const spawnCli = (args: readonly string[], env: Record<string, string> = {}): ChildProcess =>
  spawn(process.execPath, [inject('cliBundle'), ...args], {
    env: { ...process.env, SECINV_LOG_LEVEL: 'silent', SECINV_WORKERS: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });

/** Runs `secinv ARGS…` to its end: its exit code, the signal that ended it, and what it wrote. */
export const runCli = (
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> =>
  new Promise((resolve, reject) => {
    const child = spawnCli(args, env);
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });

/** Starts `secinv serve --db URL --port 0` and resolves once it listens, with its port and what stderr said so far. */
export async function spawnServe(
  databaseUrl: string,
  env: Record<string, string> = {},
): Promise<{ child: ChildProcess; port: number; stderr: string }> {
  const child = spawnCli(['serve', '--db', databaseUrl, '--port', '0'], env);
  child.stdout?.resume();
  let stderr = '';
  const port = await new Promise<number>((resolve, reject) => {
    child.stderr?.on('data', (c: Buffer) => {
      stderr += c.toString();
      const found = /serving https?:\/\/[^\s]*:(\d+)/.exec(stderr);
      if (found) resolve(Number(found[1]));
    });
    child.on('exit', () => reject(new Error(`exited early: ${stderr}`)));
  });
  child.removeAllListeners('exit');
  return { child, port, stderr };
}

/** Sends the signal and resolves with the exit code. */
export const exitCodeAfter = (child: ChildProcess, signal: NodeJS.Signals): Promise<number | null> =>
  new Promise((resolve) => {
    child.on('exit', (code) => resolve(code));
    child.kill(signal);
  });
