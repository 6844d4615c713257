// What every command writes to, and how every command opens its database: the line naming it goes to stderr, so a
// user always sees which database a command used (stdout stays for results, e.g. the key of `keys create`).
import { displayDatabaseUrl, openStorage, type ConnectOptions, type Storage } from '../storage/index.js';

export interface Io {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  /** Read by the commands that take input there (`secinv api configure`); absent: nothing to read. */
  stdin?: NodeJS.ReadableStream & { isTTY?: boolean };
}

export async function openDatabase(url: string, io: Io, options: Partial<ConnectOptions> = {}): Promise<Storage> {
  const storage = await openStorage(url, options);
  io.stderr.write(`secinv: database ${displayDatabaseUrl(url)}\n`);
  return storage;
}

/** Runs work on the database and closes it, whatever happens. */
export async function withDatabase<T>(
  url: string,
  io: Io,
  work: (storage: Storage) => Promise<T>,
  options: Partial<ConnectOptions> = {},
): Promise<T> {
  const storage = await openDatabase(url, io, options);
  try {
    return await work(storage);
  } finally {
    await storage.close();
  }
}
