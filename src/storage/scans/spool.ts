// Where an uploaded scan's bytes wait for their turn (docs/DESIGN.md §97). SQLite: files in a folder beside the
// database, so that receiving a body never waits for the database's one write lock, which a scan being applied holds
// until its commit. PostgreSQL: rows of `scan_bodies`, written in the transaction that queues the scan, so that every
// server process of the database reads them and a body cut off mid-upload leaves nothing.
import { createReadStream, mkdirSync, rmSync } from 'node:fs';
import { open, readdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';

/** Bytes of a body per stored piece: a row of scan_bodies, or one write of a spool file. */
export const BODY_PIECE_BYTES = 1024 * 1024;

/** A spool folder's file for a scan, by its id (a UUID the server made, so safe as a file name). */
const bodyFile = (folder: string, scanId: string) => join(folder, `${scanId}.body`);

/**
 * Writes the bytes to the scan's file, durable when it resolves: written to a temporary name, synced, then renamed.
 * Whatever stops the bytes (a client gone, the size limit) removes what was written and rethrows.
 */
export async function spoolBody(folder: string, scanId: string, bytes: AsyncIterable<Buffer>): Promise<void> {
  mkdirSync(folder, { recursive: true });
  const partial = join(folder, `${scanId}.part`);
  const file = await open(partial, 'w', 0o600);
  try {
    for await (const chunk of bytes) await file.write(chunk);
    await file.sync();
  } catch (error) {
    await file.close().catch(() => undefined);
    await rm(partial, { force: true });
    throw error;
  }
  await file.close();
  await rename(partial, bodyFile(folder, scanId));
}

/** The scan's bytes as spooled, in pieces. */
export const readSpooledBody = (folder: string, scanId: string): AsyncIterable<Buffer> =>
  createReadStream(bodyFile(folder, scanId), { highWaterMark: BODY_PIECE_BYTES }) as AsyncIterable<Buffer>;

export const removeSpooledBody = (folder: string, scanId: string): void =>
  rmSync(bodyFile(folder, scanId), { force: true });

export interface SpooledFile {
  scanId: string;
  modifiedMs: number;
  remove(): Promise<void>;
}

/** The files of a spool folder (none when it was never made). */
export async function spooledFiles(folder: string): Promise<SpooledFile[]> {
  const names = await readdir(folder).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [];
    throw error;
  });
  const files: SpooledFile[] = [];
  for (const name of names) {
    const found = /^(.+)\.(body|part)$/.exec(name);
    if (found === null) continue;
    const path = join(folder, name);
    const modified = await stat(path).catch(() => undefined);
    if (modified === undefined) continue;
    files.push({
      scanId: found[1]!,
      modifiedMs: modified.mtimeMs,
      remove: () => rm(path, { force: true }),
    });
  }
  return files;
}

/** Pieces of at most BODY_PIECE_BYTES, so that a row or a write never holds more whatever the client sends. */
export async function* pieces(bytes: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  let held: Buffer[] = [];
  let size = 0;
  for await (const chunk of bytes) {
    let rest = chunk;
    while (size + rest.length >= BODY_PIECE_BYTES) {
      const take = BODY_PIECE_BYTES - size;
      held.push(rest.subarray(0, take));
      yield Buffer.concat(held);
      rest = rest.subarray(take);
      held = [];
      size = 0;
    }
    if (rest.length > 0) {
      held.push(rest);
      size += rest.length;
    }
  }
  if (size > 0) yield Buffer.concat(held);
}
