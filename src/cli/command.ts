// A command as data: its flags and arguments, each with the type its value has, and its action, which gets them as one
// typed object. Each module of src/cli/commands/ declares one (or a group of them); main.ts assembles them. The action
// imports the command's code when it runs (docs/DESIGN.md §79), so declaring every command stays cheap.
import { Argument, Command, InvalidArgumentError, Option } from 'commander';
import { flagHelp, flagName, SETTINGS, type AnySetting } from '../config.js';
import { UserError } from '../domain/errors.js';
import type { Io } from './io.js';

/**
 * What the `secinv` executable does around a command, and the tests, which run the command line in process, leave out.
 */
export interface ProcessHooks {
  /** Before an ingest or an import writes to this database. */
  bulkWriteStarting?: (databaseUrl: string) => void;
}

/** What every action gets beside its values. */
export interface Context {
  io: Io;
  hooks: ProcessHooks;
  /** The whole command line (`secinv completion` writes it out). */
  program: Command;
}

declare const valueType: unique symbol;

/** A flag (made anew for each program: commander keeps parse state on it); `T` is its value's type in the action. */
export interface Flag<T> {
  option(): Option;
  readonly [valueType]?: T;
}

/** A positional argument; `T` is its value's type in the action. */
export interface Arg<T> {
  argument(): Argument;
  readonly [valueType]?: T;
}

/** A flag's name from its key: `severityLevels` is `--severity-levels`. */
export const kebab = (name: string) => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

type Flags = Record<string, Flag<unknown>>;
type Args = Record<string, Arg<unknown>>;

/** The values of flags or arguments, by their keys. */
/** The flag declarations that give a command's implementation the options it declares (`satisfies FlagsOf<Options>`). */
export type FlagsOf<T> = { [K in keyof T]: Flag<T[K]> };

export type Values<I> = { [K in keyof I]: I[K] extends Flag<infer T> ? T : I[K] extends Arg<infer T> ? T : never };

export interface CommandSpec<F extends Flags, A extends Args> {
  description: string;
  /** In the order they are typed. */
  arguments?: A;
  /** Keyed by commander's name for each (`--dry-run` is `dryRun`, `--no-resolve` is `resolve`), in help's order. */
  flags: F;
  /**
   * Flags made from data (`secinv api`'s filters, from the QuerySpecs), after the others: the action gets those given,
   * as typed.
   */
  generated?: Record<string, Flag<string | undefined>>;
  /** Help text after the options. */
  helpAfter?: string;
  action(values: Values<F> & Values<A>, context: Context, generated: Record<string, string>): Promise<void>;
}

/** A command, or a group of them, that adds itself under a parent. */
export interface CommandModule {
  name: string;
  add(parent: Command, context: Context): Command;
}

/** A subcommand that exits through main() and writes where the context says. */
function subcommand(parent: Command, name: string, io: Io): Command {
  return parent
    .command(name)
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) });
}

function addFlag(command: Command, key: string, flag: Flag<unknown>): void {
  const option = flag.option();
  // The action reads each value by its key: a key that is not commander's name for the flag would read nothing.
  if (option.attributeName() !== key)
    throw new Error(`${option.flags} is read as '${option.attributeName()}', not '${key}'`);
  command.addOption(option);
}

export function defineCommand<F extends Flags, A extends Args = Record<never, never>>(
  name: string,
  spec: CommandSpec<F, A>,
): CommandModule {
  return {
    name,
    add(parent, context) {
      const command = subcommand(parent, name, context.io).description(spec.description);
      const args = Object.entries(spec.arguments ?? {});
      for (const [, arg] of args) command.addArgument(arg.argument());
      for (const [key, flag] of Object.entries(spec.flags)) addFlag(command, key, flag);
      const generated = Object.entries(spec.generated ?? {});
      for (const [key, flag] of generated) addFlag(command, key, flag);
      if (spec.helpAfter !== undefined) command.addHelpText('after', spec.helpAfter);
      command.action(async (...given: unknown[]) => {
        const options: Record<string, unknown> = command.opts();
        const values = { ...options, ...Object.fromEntries(args.map(([key], i) => [key, given[i]])) };
        const generatedValues = Object.fromEntries(
          generated.flatMap(([key]) => {
            const value = options[key];
            return typeof value === 'string' ? [[key, value] as const] : [];
          }),
        );
        // The keys were checked against commander's names above, and each builder below types what its option holds.
        await spec.action(values as Values<F> & Values<A>, context, generatedValues);
      });
      return command;
    },
  };
}

/** A command of subcommands (`secinv keys create|list|revoke`). */
export const defineGroup = (name: string, description: string, commands: readonly CommandModule[]): CommandModule => ({
  name,
  add(parent, context) {
    const group = subcommand(parent, name, context.io).description(description);
    for (const command of commands) command.add(group, context);
    return group;
  },
});

// The flags, by the type of their value. Help shows commander's "(default: …)" for a default given here.

const flag = <T>(option: () => Option): Flag<T> => ({ option });

export function text(flags: string, help: string): Flag<string | undefined>;
export function text(flags: string, help: string, fallback: string): Flag<string>;
export function text(flags: string, help: string, fallback?: string): Flag<string | undefined> {
  return flag(() => new Option(flags, help).default(fallback));
}

export const required = (flags: string, help: string): Flag<string> =>
  flag(() => new Option(flags, help).makeOptionMandatory());

/** A switch: `true` when given; with a fallback (false), help shows it. */
export function boolean(flags: string, help: string): Flag<true | undefined>;
export function boolean(flags: string, help: string, fallback: false): Flag<boolean>;
export function boolean(flags: string, help: string, fallback?: false): Flag<boolean | undefined> {
  return flag(() => new Option(flags, help).default(fallback));
}

/** `--no-x`: true unless given. */
export const negated = (flags: `--no-${string}`, help: string): Flag<boolean> => flag(() => new Option(flags, help));

const wholeNumber = (name: string, min: number) => (value: string) => {
  if (!/^\d+$/.test(value) || Number(value) < min)
    throw new InvalidArgumentError(`${name} must be an integer >= ${min}`);
  return Number(value);
};

export function integer(flags: string, help: string, min: number): Flag<number | undefined>;
export function integer(flags: string, help: string, min: number, fallback: number): Flag<number>;
export function integer(flags: string, help: string, min: number, fallback?: number): Flag<number | undefined> {
  return flag(() => new Option(flags, help).argParser(wholeNumber(flagName(flags), min)).default(fallback));
}

/** `--timeout <seconds>`: a whole number of seconds, at least 1. */
export const timeoutSeconds = (help: string, fallback: number): Flag<number> =>
  parsed(
    '--timeout <seconds>',
    help,
    (v) => {
      if (!/^\d+$/.test(v) || Number(v) < 1) throw new UserError('--timeout must be a whole number of seconds >= 1');
      return Number(v);
    },
    fallback,
  );

/** A number read by a parser of the command's own (that words its error); without a fallback, undefined unless given. */
export function parsed(flags: string, help: string, parse: (value: string) => number): Flag<number | undefined>;
export function parsed(flags: string, help: string, parse: (value: string) => number, fallback: number): Flag<number>;
export function parsed(
  flags: string,
  help: string,
  parse: (value: string) => number,
  fallback?: number,
): Flag<number | undefined> {
  return flag(() => new Option(flags, help).argParser(parse).default(fallback));
}

export function choice<const C extends string>(flags: string, help: string, values: readonly C[]): Flag<C | undefined>;
export function choice<const C extends string>(flags: string, help: string, values: readonly C[], fallback: C): Flag<C>;
export function choice<const C extends string>(
  flags: string,
  help: string,
  values: readonly C[],
  fallback?: C,
): Flag<C | undefined> {
  return flag(() => new Option(flags, help).choices(values).default(fallback));
}

export const requiredChoice = <const C extends string>(flags: string, help: string, values: readonly C[]): Flag<C> =>
  flag(() => new Option(flags, help).choices(values).makeOptionMandatory());

/** The flag of a setting (`--db`, `--port`): its help, variable and default from the settings table. */
export const settingFlag = (
  setting: AnySetting & { flag: string },
  options: { demo?: boolean } = {},
): Flag<string | undefined> => flag(() => new Option(setting.flag, flagHelp(setting, options)));

// The arguments.

export const argument = (name: `<${string}>`, help: string): Arg<string> => ({
  argument: () => new Argument(name, help),
});

export const choiceArgument = <const C extends string>(
  name: `<${string}>`,
  help: string,
  values: readonly C[],
): Arg<C> => ({
  argument: () => new Argument(name, help).choices(values),
});

/** `<files...>`, where "-" is standard input, which can be read once. */
export const files = (help: string): Arg<string[]> => ({
  argument: () =>
    new Argument('<files...>', help).argParser((file: string, previous: string[] = []) => {
      if (file === '-' && previous.includes('-'))
        throw new InvalidArgumentError('"-" (standard input) may be given only once');
      return [...previous, file];
    }),
});

/** `--db`, of every command that opens a database but demo. */
export const database = settingFlag(SETTINGS.databaseUrl);

/** `--json`, of the commands that print a table. */
export const json = boolean('--json', 'print a JSON array instead of a table', false);

/** `-q, --quiet`, of the commands that draw a progress line. */
export const quiet = boolean('-q, --quiet', 'no progress line on a terminal');
