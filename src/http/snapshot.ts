// Snapshot then follow (pipeline.md §4, docs/DESIGN.md §103): every list answer and every export tells, in
// `Secinv-Changes-Cursor`, the change-log position of the snapshot it was read from, as a cursor that
// `GET /v1/tenant/changes` takes with any filters. An export reads all its batches in one snapshot.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { apiError } from '../domain/errors.js';
import type { ExportFormat } from '../domain/query.js';
import type { Snapshot, Storage } from '../storage/index.js';
import { cursorBinding, type CursorCodec } from './cursor.js';
import { sendExport, type ExportSource } from './export.js';

export const CHANGES_PATH = '/v1/tenant/changes';
/** The header, lower-cased as Node.js keeps header names. */
export const CHANGES_CURSOR = 'secinv-changes-cursor';
/** The one key of a change position: the log has no sort value but its own order. */
export const POSITION_KEY = 'changes';
/** How long a client is told to wait when every snapshot this server holds at once is taken. */
const SNAPSHOTS_RETRY_S = 5;

/** What the snapshot cursors of list answers are bound to: the tenant's log, any filters. */
export const snapshotBinding = (tenantId: string): string => cursorBinding(CHANGES_PATH, tenantId, { snapshot: true });

/** Sets the header of a list answer read at this log position. */
export function tellPosition(
  reply: FastifyReply,
  cursors: CursorCodec,
  tenantId: string,
  position: number,
): FastifyReply {
  return reply.header(CHANGES_CURSOR, cursors.encode([position, POSITION_KEY], snapshotBinding(tenantId)));
}

/**
 * Sends an export whose batches are all read in one snapshot of the tenant's data, with that snapshot's position. The
 * snapshot is closed when the last batch was read, when the client went away, or when the first read failed.
 */
export async function sendSnapshotExport(
  request: FastifyRequest,
  reply: FastifyReply,
  { storage, cursors }: { storage: Storage; cursors: CursorCodec },
  format: ExportFormat,
  source: Omit<ExportSource, 'batches'> & { batches: (snapshot: Snapshot) => AsyncIterable<Buffer[]> },
): Promise<FastifyReply> {
  const snapshot = await storage.openSnapshot(request.tenant);
  if (snapshot === undefined)
    throw apiError('unavailable', 'this server streams as many exports as it can at once: retry shortly', undefined, {
      'Retry-After': String(SNAPSHOTS_RETRY_S),
    });
  async function* batches(): AsyncGenerator<Buffer[]> {
    try {
      yield* source.batches(snapshot!);
    } finally {
      await snapshot!.close();
    }
  }
  tellPosition(reply, cursors, request.tenant.tenantId, snapshot.position);
  try {
    return await sendExport(request, reply, format, { ...source, batches: batches() });
  } catch (error) {
    reply.removeHeader(CHANGES_CURSOR);
    await snapshot.close();
    throw error;
  }
}
