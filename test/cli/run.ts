// Runs the command line in process with captured stdout and stderr.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { main } from '../../src/cli/main.js';
import { ndjsonLine, tenantRecord, TENANT_A } from '../records.js';

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

/** An import file holding one tenant record (tenant A), written into the folder. */
export function writeTenantFile(dir: string): string {
  const path = join(dir, 'tenant.ndjson');
  writeFileSync(path, `${ndjsonLine(tenantRecord(TENANT_A, { name: 'A' }))}\n`);
  return path;
}
