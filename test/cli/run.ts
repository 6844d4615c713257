// Runs the command line in process with captured stdout and stderr.
import { PassThrough } from 'node:stream';
import { main } from '../../src/cli/main.js';

export async function runCli(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = new PassThrough();
  const err = new PassThrough();
  const chunks = { stdout: '', stderr: '' };
  out.on('data', (c: Buffer) => {
    chunks.stdout += c.toString();
  });
  err.on('data', (c: Buffer) => {
    chunks.stderr += c.toString();
  });
  const code = await main(argv, { stdout: out, stderr: err });
  return { code, ...chunks };
}
