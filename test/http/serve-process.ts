// `secinv` in a process of its own, from the sources, for tests of what only a real process shows (signals,
// connections queued in the listen backlog, a process killed in the middle of a write).
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';

/**
 * The sources bundled into one file, once per test process: a process then starts on a third of the CPU it needs
 * through tsx (1.1 s rather than 2.5-3.2 s on a loaded machine), which tests that start a dozen of them feel. It is
 * laid out as the build is (a temporary folder with package.json, node_modules and dist/cli/bin.mjs), so that what the
 * code finds relative to itself (`../../package.json`, the code under `..` it fingerprints, the built console) is where
 * it looks.
 */
let bundled: Promise<string> | undefined;
const bundledCli = (): Promise<string> =>
  (bundled ??= (async () => {
    const root = mkdtempSync(join(tmpdir(), 'secinv-cli-'));
    copyFileSync('package.json', join(root, 'package.json'));
    symlinkSync(resolve('node_modules'), join(root, 'node_modules'));
    const outfile = join(root, 'dist', 'cli', 'bin.mjs');
    await build({
      entryPoints: ['src/cli/bin.ts'],
      bundle: true,
      platform: 'node',
      format: 'esm',
      packages: 'external',
      outfile,
      logLevel: 'warning',
    });
    // The built console, which the server finds beside its code (src/http/console.ts): dist/console.
    symlinkSync(resolve('dist', 'console'), join(root, 'dist', 'console'));
    process.once('exit', () => rmSync(root, { recursive: true, force: true }));
    return outfile;
  })());

/** Runs `secinv ARGS…` from the sources; its stdout and stderr are piped. */
export const spawnCli = async (args: readonly string[], env: Record<string, string> = {}): Promise<ChildProcess> =>
  spawn(process.execPath, [await bundledCli(), ...args], {
    env: { ...process.env, SECINV_LOG_LEVEL: 'silent', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });

/** Runs `secinv ARGS…` to its end: its exit code, the signal that ended it, and what it wrote. */
export const runCli = (
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> =>
  new Promise((resolve, reject) => {
    void spawnCli(args, env).then((child) => {
      let stdout = '';
      let stderr = '';
      child.stdout?.on('data', (c: Buffer) => (stdout += c.toString()));
      child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
      child.on('error', reject);
      child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
    }, reject);
  });

/** Starts `secinv serve --db URL --port 0` and resolves once it listens, with its port. */
export async function spawnServe(
  databaseUrl: string,
  env: Record<string, string> = {},
): Promise<{ child: ChildProcess; port: number }> {
  const child = await spawnCli(['serve', '--db', databaseUrl, '--port', '0'], env);
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
  return { child, port };
}

/** Sends the signal and resolves with the exit code. */
export const exitCodeAfter = (child: ChildProcess, signal: NodeJS.Signals): Promise<number | null> =>
  new Promise((resolve) => {
    child.on('exit', (code) => resolve(code));
    child.kill(signal);
  });
