// What a command says when its write waits for its turn: one line per reason, however often it waits for it (on SQLite
// a command may wait at its open and again at its write).
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { waitingFor, type Io } from '../../src/cli/io.js';

const capture = (): { io: Io; text: () => string } => {
  const stderr = new PassThrough();
  let text = '';
  stderr.on('data', (c: Buffer) => (text += c.toString()));
  return { io: { stdout: new PassThrough(), stderr }, text: () => text };
};

describe('the waiting lines of a command', () => {
  it('says each reason once per command, from every place that waits', () => {
    const { io, text } = capture();
    const atOpen = waitingFor(io);
    const atWrite = waitingFor(io);
    atOpen('database');
    atWrite('database');
    atWrite('tenant');
    atWrite('feeds');
    atWrite('tenant');
    expect(text()).toBe(
      [
        "secinv: waiting for another process's write to the database to commit",
        'secinv: waiting for another write to the same tenant to commit',
        'secinv: waiting for the feed load that is running to commit',
        '',
      ].join('\n'),
    );
    // Another command's output is told again.
    const other = capture();
    waitingFor(other.io)('database');
    expect(other.text()).toBe("secinv: waiting for another process's write to the database to commit\n");
  });
});
