// `secinv serve` in a process of its own, from the sources, for tests of what only a real process shows (signals,
// connections queued in the listen backlog).
import { spawn, type ChildProcess } from 'node:child_process';

/** Starts `secinv serve --db URL --port 0` and resolves once it listens, with its port. */
export async function spawnServe(
  databaseUrl: string,
  env: Record<string, string> = {},
): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      '-e',
      "import('./src/cli/main.ts').then(async (m) => { process.exitCode = await m.main(process.argv.slice(1)); })",
      'serve',
      '--db',
      databaseUrl,
      '--port',
      '0',
    ],
    { env: { ...process.env, SECINV_LOG_LEVEL: 'silent', ...env }, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  const port = await new Promise<number>((resolve, reject) => {
    child.stderr.on('data', (c: Buffer) => {
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
