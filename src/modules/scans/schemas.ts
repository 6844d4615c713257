// HTTP side of scans (pipeline.md §2): the upload's options and the list's filters as query tables, and the Scan
// record's schema for the OpenAPI document. The record itself is src/domain/scans.ts.
import { Type, type TSchema } from 'typebox';
import { findingSeverities, providers } from '../../domain/enums.js';
import { querySpec, type ParsedQuery } from '../../domain/query.js';
import { scanStatuses } from '../../domain/scans.js';
import { StringEnum } from '../../domain/schema.js';
import { EXAMPLE_TENANT, queryExamples } from '../../http/docs.js';
import { defineQuery } from '../../http/query.js';
import { ingestFormats } from '../../input/formats.js';

export const uploadScanSpec = querySpec({
  format: {
    kind: 'enum',
    values: ['auto', ...ingestFormats],
    default: 'auto',
    description: 'The report format, as `secinv ingest --format`; `auto` (default) tells it by its content.',
  },
  provider: {
    kind: 'enum',
    values: providers,
    description: 'The provider of the scanned asset, as `--provider` (when the report does not say).',
  },
  region: { kind: 'string', description: 'The region of the scanned asset, as `--region`.' },
  assetId: { kind: 'string', description: 'Attach the findings to this existing asset, as `--asset`.' },
  cluster: { kind: 'string', description: 'The cluster of a Kubernetes report that does not name it, as `--cluster`.' },
  integrationId: { kind: 'string', description: 'The integration (a UUID) the findings are served with.' },
  resolve: {
    kind: 'boolean',
    default: true,
    description:
      'Resolve what the same scanner reported on the asset before and no longer does (`false`: `--no-resolve`).',
  },
  name: { kind: 'string', description: 'A label for the upload, up to 255 characters (the file name, say).' },
});
export type UploadScanQuery = ParsedQuery<typeof uploadScanSpec.params>;
export const uploadScanQuery = defineQuery(uploadScanSpec);

export const listScansSpec = querySpec(
  {
    statuses: { kind: 'list', item: { type: 'enum', values: scanStatuses }, description: 'Scan statuses.' },
    formats: { kind: 'list', item: { type: 'enum', values: ingestFormats }, description: 'Detected formats.' },
    submittedAtStart: { kind: 'datetime', description: 'Inclusive start of the submittedAt range.' },
    submittedAtEnd: { kind: 'datetime', description: 'Inclusive end of the submittedAt range.' },
    cursor: {
      kind: 'string',
      description: 'The opaque `meta.cursor` of the previous batch, passed unchanged with the same filters.',
    },
    perPage: {
      kind: 'integer',
      min: 1,
      max: 100,
      default: 25,
      description: 'Batch size, an integer from 1 to 100 (default 25).',
    },
  },
  { ranges: [['submittedAtStart', 'submittedAtEnd']] },
);
export type ListScansQuery = ParsedQuery<typeof listScansSpec.params>;
export const listScansQuery = defineQuery(listScansSpec);
/** One scan takes no parameter: any is 400, as everywhere. */
export const getScanQuery = defineQuery(querySpec({}));

queryExamples(uploadScanQuery, { format: 'trivy', name: 'trivy-app.json', provider: 'AWS', region: 'eu-west-1' });
queryExamples(listScansQuery, { statuses: 'failed,succeeded', submittedAtStart: '2026-05-01', perPage: '50' });

const counts = (names: readonly string[], description: string): TSchema =>
  Type.Object(Object.fromEntries(names.map((name) => [name, Type.Integer()])), { description });
const severities = (description: string) => counts(findingSeverities, description);
const nullable = (schema: TSchema, description: string) => Type.Union([schema, Type.Null()], { description });

export const Scan = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    tenantId: Type.String({ format: 'uuid' }),
    status: StringEnum(scanStatuses, 'queued, running, succeeded or failed'),
    name: nullable(Type.String(), 'The `name` parameter of the upload (`secinv ingest`: the file name)'),
    format: nullable(Type.String(), 'The format as detected, null until known'),
    options: Type.Record(Type.String(), Type.Unknown(), { description: 'The options given, as parsed' }),
    sizeBytes: Type.Integer({ description: 'Bytes received (after a `Content-Encoding: gzip` is decoded)' }),
    sha256: Type.String({ description: 'SHA-256 of the bytes received, hex' }),
    keyId: nullable(Type.String(), 'The id (never the secret) of the key that uploaded it; null for `secinv ingest`'),
    submittedAt: Type.String({ format: 'date-time' }),
    startedAt: nullable(Type.String({ format: 'date-time' }), 'When a server began to apply it'),
    finishedAt: nullable(Type.String({ format: 'date-time' }), 'When it ended'),
    summary: nullable(
      Type.Object({
        assets: counts(['created', 'updated', 'unchanged'], 'Assets the report is about'),
        findings: counts(['added', 'updated', 'unchanged', 'resolved'], 'Findings on them'),
        exemptions: counts(
          ['added', 'removed'],
          "The tenant's VEX exemptions (one per document and vulnerability) that it made and that it removed: a VEX " +
            'document loaded again without a statement, or with one that no longer exempts, removes one, and so does ' +
            'a scan after which a statement matches no asset; one whose assets or text changed is neither. For a ' +
            "`secinv ingest` run of several files, the whole run's",
        ),
        checks: counts(['failed', 'passed'], 'Configuration checks'),
        risks: counts(['new', 'changed', 'gone'], 'Risks the rules derived'),
        assetIds: Type.Array(Type.String(), { description: 'The assets the report is about' }),
      }),
      'When succeeded: what it changed',
    ),
    gate: nullable(
      Type.Object({
        open: severities('Open, not exempted findings on its assets after it, by severity'),
        added: severities('Findings it added, by severity'),
        kev: Type.Integer({ description: 'Open, not exempted findings on its assets in CISA KEV' }),
        exploit: Type.Integer({ description: 'Open, not exempted findings on its assets with a public exploit' }),
      }),
      'When succeeded: what a CI gate (`secinv push --fail-on`) judges',
    ),
    problems: Type.Array(
      Type.Object({
        message: Type.String(),
        file: Type.Optional(Type.String()),
        path: Type.Optional(Type.String({ description: 'A JSON Pointer into the report' })),
        line: Type.Optional(Type.Integer()),
      }),
      { description: 'When failed: why, as `secinv ingest` prints it' },
    ),
  },
  { description: 'A report uploaded to be ingested, or ingested by `secinv ingest`' },
);

export const ScanResponse = Type.Object({ data: Scan });
export const ListScansResponse = Type.Object({
  data: Type.Array(Scan),
  meta: Type.Object({
    perPage: Type.Integer({ description: 'The batch size of this response' }),
    cursor: Type.Union([Type.String(), Type.Null()], {
      description: 'Pass it as `cursor` for the next batch; null on the last',
    }),
  }),
});

export const scanExample = {
  id: '5f0c6f57-6d1b-4b8f-9d55-3f7d0b0e7a11',
  tenantId: EXAMPLE_TENANT,
  status: 'queued',
  name: 'trivy-app.json',
  format: null,
  options: { format: 'auto', resolve: true, name: 'trivy-app.json' },
  sizeBytes: 48211,
  sha256: '9f2a4c1e0b7d3a5f6e8c9b1a2d3e4f5061728394a5b6c7d8e9f00112233445566',
  keyId: 'key_3a9f1c2b4d5e6f70',
  submittedAt: '2026-05-04T09:12:44.120Z',
  startedAt: null,
  finishedAt: null,
  summary: null,
  gate: null,
  problems: [],
};
