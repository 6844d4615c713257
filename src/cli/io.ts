// What every command writes to, and how every command opens its database: the line naming it goes to stderr, so a
// user always sees which database a command used (stdout stays for results, e.g. the key of `keys create`).
import {
  displayDatabaseUrl,
  openStorage,
  type ConnectOptions,
  type Storage,
  type WaitReason,
} from '../storage/index.js';

export interface Io {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  /** Read by the commands that take input there (`secinv api configure`); absent: nothing to read. */
  stdin?: NodeJS.ReadableStream & { isTTY?: boolean };
}

/** The feed load an import, ingest or derivation waits for, and the writes a feed load waits for. */
const FEED_LOAD = 'the feed load that is running';
export const FEED_READERS = 'the writes that are running (imports, ingests, risk derivations, another feed load)';

/**
 * What a bulk write says when it waits for its turn, with the feed loads or with another write to the same tenant
 * (PostgreSQL, docs/DESIGN.md §87) or with another process's write (SQLite, §89), so that a command standing still is
 * not taken for a hung one.
 */
export const waitingFor =
  (io: Io, feeds: string = FEED_LOAD): ((reason: WaitReason) => void) =>
  (reason) => {
    // Once per command and message: on SQLite a command may wait at its open and again at its write, for the same
    // reason, and two identical lines would read as a loop.
    const line = `secinv: waiting for ${reason === 'feeds' ? feeds : OTHER_WRITES[reason]} to commit\n`;
    const said = saidTo.get(io) ?? new Set<string>();
    saidTo.set(io, said);
    if (said.has(line)) return;
    said.add(line);
    io.stderr.write(line);
  };

/** The waiting lines each command's output has been given. */
const saidTo = new WeakMap<Io, Set<string>>();

/** What an import, ingest or derivation waits for beside another write to the same tenant, or to the SQLite file. */
const OTHER_WRITES = {
  tenant: 'another write to the same tenant',
  database: "another process's write to the database",
} as const;

export async function openDatabase(url: string, io: Io, options: Partial<ConnectOptions> = {}): Promise<Storage> {
  // A command waits for another process's write that holds the SQLite file; the server (the API role) does not.
  const onLocked = () => waitingFor(io)('database');
  const storage = await openStorage(url, options.role === 'api' ? options : { onLocked, ...options });
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
