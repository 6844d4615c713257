// Completion scripts are written from the command tree: every command and flag is in them, and the bash one, run by
// bash, completes subcommands, flags and a flag's choices at any depth.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { completionScript } from '../../src/cli/completion.js';
import { buildProgram } from '../../src/cli/main.js';

const program = buildProgram({ stdout: new PassThrough(), stderr: new PassThrough() });
const commands = program.commands.map((c) => c.name());
const hasBash = (() => {
  try {
    execFileSync('bash', ['-c', 'declare -A x=([a]=b)']);
    return true;
  } catch {
    return false;
  }
})();

describe('completion scripts', () => {
  it.each(['bash', 'zsh', 'fish'] as const)('%s names every command, and the flags of secinv api risks', (shell) => {
    const script = completionScript(program, shell);
    expect(commands).toEqual(expect.arrayContaining(['serve', 'import', 'ingest', 'api', 'completion', 'demo']));
    for (const name of [...commands, 'configure', 'vulnerabilities', 'asset']) expect(script).toContain(name);
    for (const flag of ['severity-levels', 'lifecycle-states', 'output', 'dry-run']) expect(script).toContain(flag);
  });

  it('fish: subcommands after their parents, choices of a flag', () => {
    const script = completionScript(program, 'fish');
    expect(script).toContain("complete -c secinv -n '__fish_use_subcommand' -a 'api'");
    expect(script).toMatch(/-n '__secinv_path api; and not __fish_seen_subcommand_from [^']*' -a 'risks'/);
    expect(script).toMatch(/-n '__secinv_path api risks' -l output -s o -x -a 'table json ndjson csv yaml'/);
  });

  it.skipIf(!hasBash)('bash completes what may come next at each depth', () => {
    const dir = mkdtempSync(join(tmpdir(), 'secinv-completion-'));
    const file = join(dir, 'secinv.bash');
    writeFileSync(file, completionScript(program, 'bash'));
    try {
      const complete = (...words: string[]) =>
        execFileSync('bash', [
          '-c',
          `source ${file}; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _secinv; echo "\${COMPREPLY[*]}"`,
        ])
          .toString()
          .trim()
          .split(' ');
      expect(complete('secinv', 'ap')).toEqual(['api']);
      expect(complete('secinv', 'api', '')).toEqual(expect.arrayContaining(['risks', 'assets', 'asset', 'configure']));
      expect(complete('secinv', 'api', 'risks', '--severity-levels', 'HIGH', '--lif')).toEqual(['--lifecycle-states']);
      expect(complete('secinv', 'api', 'risks', '-o', '')).toEqual(['table', 'json', 'ndjson', 'csv', 'yaml']);
      expect(complete('secinv', 'ingest', '--format', 'tri')).toEqual(['trivy', 'trivy-k8s', 'trivy-operator']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
