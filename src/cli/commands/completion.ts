// `secinv completion bash|zsh|fish`: written from the command line itself (src/cli/completion.ts).
import { choiceArgument, defineCommand } from '../command.js';
import { completionCommand, shells } from '../completion.js';

export default defineCommand('completion', {
  description: 'Print a completion script: secinv completion bash > /etc/bash_completion.d/secinv (zsh, fish alike).',
  arguments: { shell: choiceArgument('<shell>', 'the shell', shells) },
  flags: {},
  action: async ({ shell }, { io, program }) => completionCommand(program, shell, io),
});
