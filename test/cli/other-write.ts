// Another process's write to a SQLite file in progress, and a command started beside it: SQLite waits for a lock on
// the thread that asks, so the command runs in a process of its own.
import Database from 'better-sqlite3';
import { spawnCli } from '../http/serve-process.js';

/** What a command says while it waits for the other write. */
export const WAITING = "secinv: waiting for another process's write to the database to commit\n";

/**
 * Another process's write in progress (it renames the tenant): under WAL, as beside a running server, or holding the
 * file whole under a rollback journal, as a lone bulk write does (src/storage/db/journal.ts).
 */
export function otherWrite(url: string, tenant: string, journal: 'wal' | 'delete'): Database.Database {
  const other = new Database(url.replace(/^sqlite:/, ''));
  other.pragma(`journal_mode = ${journal}`);
  other.exec(journal === 'wal' ? 'begin immediate' : 'begin exclusive');
  other.prepare("update tenants set name = 'renamed' where tenant_id = ?").run(tenant);
  return other;
}

/**
 * Starts a command in a process of its own and resolves once it says it waits, with its exit code and what it wrote
 * by then (and after).
 */
export async function waitingCommand(
  args: readonly string[],
): Promise<{ closed: Promise<number | null>; stdout: () => string; stderr: () => string }> {
  const child = spawnCli(args);
  let [stdout, stderr] = ['', ''];
  child.stdout?.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
  const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
  for (let tries = 0; !stderr.includes(WAITING); tries += 1) {
    if (tries > 600 || child.exitCode !== null) throw new Error(`\`secinv ${args[0]}\` did not wait: ${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { closed, stdout: () => stdout, stderr: () => stderr };
}
