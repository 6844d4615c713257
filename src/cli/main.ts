// The `secinv` command line. Exit codes: 0 success, 1 failure (one line on stderr), 2 bad usage; results on stdout,
// everything for people (progress, the database opened, errors) on stderr. Each command is a module of
// src/cli/commands/ that declares its flags and its action; this file assembles them.
import { Command, CommanderError } from 'commander';
import { environmentHelp } from '../config.js';
import { UserError } from '../domain/errors.js';
import { packageVersion } from '../http/version.js';
import type { CommandModule, ProcessHooks } from './command.js';
import api from './commands/api.js';
import push from './commands/push.js';
import completion from './commands/completion.js';
import demo from './commands/demo.js';
import feeds from './commands/feeds.js';
import generate from './commands/generate.js';
import importFiles from './commands/import.js';
import ingest from './commands/ingest.js';
import keys from './commands/keys.js';
import risks from './commands/risks.js';
import serve from './commands/serve.js';
import tenants from './commands/tenants.js';
import webhooks from './commands/webhooks.js';
import { failureLine } from './failure.js';
import type { Io } from './io.js';

export type { Io } from './io.js';
export type { ProcessHooks } from './command.js';
// Each command's code is loaded when the command runs: loaded at start, every command paid for every other's modules
// (the scanner formats, the feed parsers, the import), and `secinv --version` took a second (docs/DESIGN.md §79).

/** The commands, in the order `secinv --help` lists them. */
const COMMANDS: readonly CommandModule[] = [
  serve,
  importFiles,
  ingest,
  tenants,
  feeds,
  risks,
  keys,
  webhooks,
  generate,
  demo,
  completion,
  api,
  push,
];

export function buildProgram(io: Io, hooks: ProcessHooks = {}): Command {
  const program = new Command('secinv')
    .description('Self-hostable server for the Tenant Security Inventory API.')
    .version(packageVersion())
    .showHelpAfterError()
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) })
    .addHelpText('after', environmentHelp());
  for (const command of COMMANDS) command.add(program, { io, hooks, program });
  return program;
}

export async function main(
  argv: string[],
  io: Io = { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin },
  hooks: ProcessHooks = {},
): Promise<number> {
  const program = buildProgram(io, hooks);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version are successes; every other parse failure is bad usage.
      return error.code === 'commander.helpDisplayed' ||
        error.code === 'commander.help' ||
        error.code === 'commander.version'
        ? 0
        : 2;
    }
    io.stderr.write(`secinv: ${failureLine(error)}\n`);
    // `secinv push` says why it failed in its exit code (src/cli/push.ts).
    return error instanceof UserError ? ((error as { exitCode?: number }).exitCode ?? 1) : 1;
  }
}
