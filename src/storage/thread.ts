// Starting a worker thread whether the code runs built (a .js file beside its caller) or from its TypeScript sources
// (tests, benchmarks under tsx): Node 20 gives a worker no loader of its parent's, so a .ts worker loads tsx first.
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/** Starts the worker `name` (without extension) that lives beside the module at `callerUrl` (its import.meta.url). */
export function startWorker(callerUrl: string, name: string, options: WorkerOptions = {}): Worker {
  const fromSources = callerUrl.endsWith('.ts');
  const workerUrl = new URL(`./${name}${fromSources ? '.ts' : '.js'}`, callerUrl);
  if (!fromSources) return new Worker(workerUrl, options);
  // tsx's `tsx/esm/api` export (import condition), beside its main entry `dist/loader.mjs`.
  const tsx = new URL('./esm/api/index.mjs', pathToFileURL(createRequire(import.meta.url).resolve('tsx'))).href;
  const boot = `import(${JSON.stringify(tsx)}).then((t) => (t.register(), import(${JSON.stringify(workerUrl.href)})))`;
  return new Worker(boot, { ...options, eval: true });
}
