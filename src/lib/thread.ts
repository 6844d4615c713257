// Starting a worker thread whether the code runs built (a .js file beside its caller) or from its TypeScript sources
// (tests, benchmarks under tsx): Node 20 gives a worker no loader of its parent's, so a .ts worker loads tsx first.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker, type MessagePort, type WorkerOptions } from 'node:worker_threads';
import { retried } from './retry.js';

let builtWorkers: string | null = null;

/**
 * A folder of built workers (`<name>.js`, as scripts/bundle.ts writes them) that code running from its sources starts
 * instead of loading tsx into each thread; null: none. The test run bundles them once (test/global-setup.ts): a thread
 * that compiles its sources under tsx costs seconds of a core where the bundle costs a tenth of that.
 */
export function startBuiltWorkersFrom(folder: string | null): void {
  builtWorkers = folder;
}

/** Starts the worker `name` (without extension) that lives beside the module at `callerUrl` (its import.meta.url). */
export function startWorker(callerUrl: string, name: string, options: WorkerOptions = {}): Worker {
  const fromSources = callerUrl.endsWith('.ts');
  const workerUrl = new URL(`./${name}${fromSources ? '.ts' : '.js'}`, callerUrl);
  if (!fromSources) return new Worker(workerUrl, options);
  const built = builtWorkers === null ? null : join(builtWorkers, `${name}.js`);
  if (built !== null && existsSync(built)) return new Worker(pathToFileURL(built), options);
  // tsx's `tsx/esm/api` export (import condition), beside its main entry `dist/loader.mjs`.
  const tsx = new URL('./esm/api/index.mjs', pathToFileURL(createRequire(import.meta.url).resolve('tsx'))).href;
  const boot = `import(${JSON.stringify(tsx)}).then((t) => (t.register(), import(${JSON.stringify(workerUrl.href)})))`;
  return new Worker(boot, { ...options, eval: true });
}

/** A worker thread that answers each message with one reply, in the order the messages were sent. */
export interface OrderedWorker<Request, Reply> {
  /** Posts a message; resolves with its reply, or rejects once the thread has failed, stopped or been closed. */
  request(message: Request): Promise<Reply>;
  /** Ends the thread; requests still waiting, and any made after, reject with "`what` was closed". */
  close(): Promise<void>;
}

/**
 * Starts the worker `name` as startWorker does, for request and reply in order (the ingest's preparing thread, the risk
 * rules' thread). `what` names the thread in its errors: "`what` stopped (exit code 1)".
 */
export function orderedWorker<Request, Reply>(
  callerUrl: string,
  name: string,
  what: string,
  options: WorkerOptions = {},
): OrderedWorker<Request, Reply> {
  const thread = startWorker(callerUrl, name, options);
  const waiting: { resolve: (reply: Reply) => void; reject: (error: Error) => void }[] = [];
  let stopped: Error | null = null;
  const fail = (error: Error) => {
    stopped ??= error;
    for (const { reject } of waiting.splice(0)) reject(stopped);
  };
  thread.on('message', (reply: Reply) => waiting.shift()?.resolve(reply));
  thread.on('error', fail);
  thread.on('exit', (code) => fail(new Error(`${what} stopped (exit code ${code})`)));
  return {
    request: (message) =>
      new Promise((resolve, reject) => {
        if (stopped) return reject(stopped);
        waiting.push({ resolve, reject });
        thread.postMessage(message);
      }),
    close: async () => {
      fail(new Error(`${what} was closed`));
      await thread.terminate();
    },
  };
}

/** A worker thread driven by messages that ends itself once told to stop (the server's scan and webhook threads). */
export interface MessagedWorker<To> {
  /** Posts a message; dropped once the thread has exited. */
  post(message: To): void;
  /** Posts `message` (the thread's stop) and resolves once the thread has exited. */
  stop(message: To): Promise<void>;
}

/**
 * Starts the worker `name` as startWorker does, handing each message it posts to `onMessage` and its failure to
 * `onError`.
 */
export function messagedWorker<To, From>(
  callerUrl: string,
  name: string,
  workerData: unknown,
  onMessage: (message: From) => void,
  onError: (error: Error) => void,
): MessagedWorker<To> {
  const thread = startWorker(callerUrl, name, { workerData });
  let exited = false;
  const exit = new Promise<void>((resolve) =>
    thread.once('exit', () => {
      exited = true;
      resolve();
    }),
  );
  thread.on('message', onMessage);
  thread.on('error', onError);
  const post = (message: To) => {
    if (!exited) thread.postMessage(message);
  };
  return {
    post,
    stop: async (message) => {
      post(message);
      await exit;
    },
  };
}

/** What the server's scan and webhook threads are told. */
export type ToLoopThread = { type: 'wake' } | { type: 'stop' };

/** The work a loop thread runs once it has opened what it works on. */
export interface ThreadLoop {
  wake(): void;
  stop(): Promise<void>;
}

export interface LoopThreadParts<Opened> {
  /** Opens what the loop works on (the database); tried again, with growing waits, until it succeeds or a stop. */
  open: () => Promise<Opened>;
  close: (opened: Opened) => Promise<void>;
  /** Called after each failed open with its error and the wait before the next try, in words: "…; trying again in 2 s". */
  onOpenError: (message: string) => void;
  start: (opened: Opened) => ThreadLoop;
  /** A `wake` message; by default the loop's wake, once it runs. */
  onWake?: (loop: ThreadLoop | undefined) => void;
}

/**
 * The thread's side of messagedWorker for a loop (the scan runner, the webhook dispatcher): opens, starts the loop,
 * wakes it on `wake`, and on `stop` stops it, closes and ends the thread, whether or not the open succeeded yet.
 */
export async function runLoopThread<Opened>(port: MessagePort, parts: LoopThreadParts<Opened>): Promise<void> {
  const { open, close, onOpenError, start, onWake = (loop) => loop?.wake() } = parts;
  const stopping = new AbortController();
  const state: { running?: { opened: Opened; loop: ThreadLoop } } = {};
  port.on('message', (message: ToLoopThread) => {
    if (message.type === 'wake') return onWake(state.running?.loop);
    stopping.abort();
    void (async () => {
      const { running } = state;
      if (running === undefined) return;
      await running.loop.stop();
      await close(running.opened);
    })().finally(() => process.exit(0));
  });
  const opened = await retried(open, {
    signal: stopping.signal,
    onError: (error, waitMs) => onOpenError(`${(error as Error).message}; trying again in ${waitMs / 1000} s`),
  });
  // Undefined: stopped while opening, and the thread is ending.
  if (opened !== undefined) state.running = { opened, loop: start(opened) };
}
