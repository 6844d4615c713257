// Ingests report texts given by name, as `secinv ingest` would read them from files, at a fixed time by default.
import { Readable } from 'node:stream';
import { ingestFiles, type IngestOptions, type IngestResult } from '../../src/ingest/ingest.js';
import type { Storage } from '../../src/storage/index.js';
import { TENANT_A } from '../helpers.js';

export const ingestTexts = (
  storage: Storage,
  files: Record<string, string>,
  options: Partial<IngestOptions> = {},
): Promise<IngestResult> =>
  ingestFiles(
    storage,
    Object.entries(files).map(([name, text]) => ({ name, open: () => Readable.from([Buffer.from(text)]) })),
    {
      tenantId: TENANT_A,
      format: 'auto',
      resolve: true,
      dryRun: false,
      now: () => new Date('2026-11-01T10:00:00Z'),
      ...options,
    },
  );
