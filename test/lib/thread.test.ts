// Worker threads started from TypeScript sources: under tsx by default, or from a folder of built workers when one is
// given (test/setup.ts gives the bundle for the rest of the suite).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { orderedWorker, startBuiltWorkersFrom } from '../../src/lib/thread.js';

const folder = mkdtempSync(join(tmpdir(), 'secinv-workers-'));
afterAll(() => {
  startBuiltWorkersFrom(dirname(inject('cliBundle')));
  rmSync(folder, { recursive: true, force: true });
});

const ask = async (message: string) => {
  const worker = orderedWorker<string, { message: string; from: string }>(import.meta.url, 'echo-worker', 'the echo');
  try {
    return await worker.request(message);
  } finally {
    await worker.close();
  }
};

describe('startWorker from sources', () => {
  it('runs the .ts worker beside its caller under tsx when no built folder holds it', async () => {
    startBuiltWorkersFrom(null);
    const reply = await ask('one');
    expect(reply).toEqual({ message: 'one', from: new URL('./echo-worker.ts', import.meta.url).href });
    // A folder without that worker changes nothing.
    startBuiltWorkersFrom(folder);
    expect((await ask('two')).from).toMatch(/\/test\/lib\/echo-worker\.ts$/);
  });

  it('runs the built worker of that name when the folder holds one', async () => {
    writeFileSync(
      join(folder, 'echo-worker.js'),
      "import { parentPort } from 'node:worker_threads';\n" +
        "parentPort.on('message', (message) => parentPort.postMessage({ message: message + '!', from: import.meta.url }));\n",
    );
    startBuiltWorkersFrom(folder);
    const reply = await ask('three');
    expect(reply.message).toBe('three!');
    expect(reply.from).toMatch(/secinv-workers-[^/]+\/echo-worker\.js$/);
  });
});
