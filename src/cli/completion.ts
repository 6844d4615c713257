// `secinv completion bash|zsh|fish`: completion scripts written from the command tree itself, so every command and
// flag (the generated filter flags of `secinv api` too) completes without a list kept by hand. Each script maps the
// words typed so far (subcommands only) to the words that may come next: subcommands, flags, and a flag's choices.
import type { Command } from 'commander';
import type { Io } from './io.js';

export const shells = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof shells)[number];

interface Node {
  /** Subcommand names from the top, e.g. ['api', 'risks']. */
  path: string[];
  commands: { name: string; description: string }[];
  flags: { long: string; short: string | undefined; description: string; choices: readonly string[] | undefined }[];
}

function walk(command: Command, path: string[] = []): Node[] {
  const node: Node = {
    path,
    commands: command.commands.map((c) => ({ name: c.name(), description: c.description() })),
    flags: [
      ...command.options.flatMap((o) =>
        o.long ? [{ long: o.long, short: o.short, description: o.description, choices: o.argChoices }] : [],
      ),
      { long: '--help', short: '-h', description: 'display help', choices: undefined },
    ],
  };
  return [node, ...command.commands.flatMap((c) => walk(c, [...path, c.name()]))];
}

const quote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;
const firstLine = (text: string) => (text.split('\n')[0] ?? '').replace(/\s+/g, ' ').slice(0, 100);

// The body of the bash function (a plain string: its `${…}` are bash's). WORDS and CHOICES are filled in.
const BASH_BODY = [
  '  local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}" path=secinv w i',
  '  for ((i = 1; i < COMP_CWORD; i++)); do',
  '    w="${COMP_WORDS[i]}"',
  '    [[ -n "${words[$path $w]+x}" ]] && path="$path $w"',
  '  done',
  '  if [[ -n "${choices[$path $prev]+x}" ]]; then',
  '    COMPREPLY=($(compgen -W "${choices[$path $prev]}" -- "$cur"))',
  '  else',
  '    COMPREPLY=($(compgen -W "${words[$path]}" -- "$cur"))',
  '  fi',
].join('\n');

function bash(nodes: Node[]): string {
  // Keys are the subcommands typed so far, after the command's own name (bash refuses an empty key).
  const key = (path: string[]) => quote(['secinv', ...path].join(' '));
  const words = nodes.map((n) => {
    const next = [...n.commands.map((c) => c.name), ...n.flags.flatMap((f) => [f.long, ...(f.short ? [f.short] : [])])];
    return `    [${key(n.path)}]=${quote(next.join(' '))}`;
  });
  const choices = nodes.flatMap((n) =>
    n.flags.flatMap((f) =>
      f.choices
        ? [f.long, ...(f.short ? [f.short] : [])].map(
            (flag) => `    [${key([...n.path, flag])}]=${quote(f.choices!.join(' '))}`,
          )
        : [],
    ),
  );
  return [
    "# secinv completion for bash: source it, or save it in bash-completion's folder.",
    '_secinv() {',
    '  local -A words=(',
    ...words,
    '  )',
    '  local -A choices=(',
    ...choices,
    '  )',
    BASH_BODY,
    '}',
    'complete -o default -F _secinv secinv',
    '',
  ].join('\n');
}

// zsh runs the bash function through its bash-completion layer: one script to keep right instead of two.
const zsh = (nodes: Node[]) => `#compdef secinv
# secinv completion for zsh: source it from .zshrc (it loads bashcompinit).
autoload -U +X compinit && compinit
autoload -U +X bashcompinit && bashcompinit
${bash(nodes).split('\n').slice(1).join('\n')}`;

function fish(nodes: Node[]): string {
  const lines = [
    '# secinv completion for fish: save as ~/.config/fish/completions/secinv.fish',
    'complete -c secinv -f',
  ];
  for (const node of nodes) {
    // The words typed so far are exactly this node's path (and no deeper subcommand).
    const deeper = node.commands.map((c) => c.name);
    const condition =
      node.path.length === 0
        ? '__fish_use_subcommand'
        : `__secinv_path ${node.path.join(' ')}${deeper.length > 0 ? `; and not __fish_seen_subcommand_from ${deeper.join(' ')}` : ''}`;
    for (const c of node.commands)
      lines.push(`complete -c secinv -n ${quote(condition)} -a ${quote(c.name)} -d ${quote(firstLine(c.description))}`);
    for (const f of node.flags) {
      const short = f.short ? ` -s ${f.short.slice(1)}` : '';
      const args = f.choices ? ` -x -a ${quote(f.choices.join(' '))}` : '';
      lines.push(
        `complete -c secinv -n ${quote(condition)} -l ${f.long.slice(2)}${short}${args} -d ${quote(firstLine(f.description))}`,
      );
    }
  }
  const helper = `function __secinv_path --description 'whether the subcommands typed so far start with the arguments'
  set -l typed (commandline -opc)[2..-1]
  set -l words (string match -v -- '-*' $typed)
  for i in (seq (count $argv))
    test "$words[$i]" = "$argv[$i]"; or return 1
  end
end`;
  return `${[lines[0], helper, ...lines.slice(1)].join('\n')}\n`;
}

export function completionScript(program: Command, shell: Shell): string {
  const nodes = walk(program);
  return shell === 'bash' ? bash(nodes) : shell === 'zsh' ? zsh(nodes) : fish(nodes);
}

export async function completionCommand(program: Command, shell: Shell, io: Io): Promise<void> {
  io.stdout.write(completionScript(program, shell));
}
