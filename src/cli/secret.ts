// Reading an API key for `secinv api configure` without it landing in the shell's history: piped on standard input,
// or typed at a prompt that does not echo it.
import { UserError } from '../domain/errors.js';
import type { Io } from './io.js';

type TtyIn = NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?: (raw: boolean) => unknown };

/** Typed at a terminal: raw mode, nothing echoed; Enter ends it, Ctrl-C cancels, Backspace erases. */
function prompt(stdin: TtyIn, io: Io): Promise<string> {
  io.stderr.write('API key (not shown): ');
  stdin.setRawMode?.(true);
  stdin.resume();
  return new Promise((resolve, reject) => {
    let key = '';
    const done = (error?: Error) => {
      stdin.removeListener('data', onData);
      stdin.setRawMode?.(false);
      stdin.pause();
      io.stderr.write('\n');
      if (error) reject(error);
      else resolve(key);
    };
    const onData = (chunk: Buffer | string) => {
      for (const ch of chunk.toString()) {
        if (ch === '\r' || ch === '\n') return done();
        if (ch === '\u0003') return done(new UserError('cancelled'));
        key = ch === '\u007f' || ch === '\b' ? key.slice(0, -1) : key + ch;
      }
    };
    stdin.on('data', onData);
  });
}

/** The key from standard input (its first line), or undefined when there is none to read. */
export async function readKey(io: Io): Promise<string | undefined> {
  const stdin = io.stdin;
  if (stdin === undefined) return undefined;
  if (stdin.isTTY === true) return (await prompt(stdin, io)).trim() || undefined;
  let text = '';
  for await (const chunk of stdin) text += (chunk as Buffer).toString();
  return text.split(/\r?\n/)[0]?.trim() || undefined;
}
