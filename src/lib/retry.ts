// Trying again after a failure, with waits that grow: the server's background threads open the database this way, so
// that a database unreachable for a moment at their start (a restart, a connection that timed out) delays their work
// instead of ending it while the server goes on answering.
import { setTimeout as sleep } from 'node:timers/promises';

export interface RetryOptions {
  /** Called after each failure with the error and the wait before the next try. */
  onError: (error: unknown, waitMs: number) => void;
  /** Once aborted, no further try is made and the wait in progress ends. */
  signal: AbortSignal;
  /** The first wait; each next one doubles, up to `maxMs`. */
  firstMs?: number;
  maxMs?: number;
}

/** Calls `attempt` until it resolves, and resolves with its value; undefined once `signal` aborted. */
export async function retried<T>(
  attempt: () => Promise<T>,
  { onError, signal, firstMs = 1000, maxMs = 30_000 }: RetryOptions,
): Promise<T | undefined> {
  for (let waitMs = firstMs; !signal.aborted; waitMs = Math.min(maxMs, waitMs * 2)) {
    try {
      return await attempt();
    } catch (error) {
      if (signal.aborted) return undefined;
      onError(error, waitMs);
      await sleep(waitMs, undefined, { signal }).catch(() => undefined);
    }
  }
  return undefined;
}
