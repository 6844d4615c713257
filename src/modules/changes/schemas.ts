// HTTP side of the change log (pipeline.md §4): the list's filters as a query table and the Change record's schema for
// the OpenAPI document. The rules of what a change is are src/domain/changes.ts.
import { Type, type TSchema } from 'typebox';
import { causeKinds, changeTypes } from '../../domain/changes.js';
import { formatParam, querySpec, type ParsedQuery } from '../../domain/query.js';
import { StringEnum } from '../../domain/schema.js';
import { queryExamples, ref } from '../../http/docs.js';
import { defineQuery } from '../../http/query.js';

const strings = (description: string) => ({ kind: 'list', item: { type: 'string' }, description }) as const;

const pageParams = {
  cursor: {
    kind: 'string',
    description:
      'The `meta.cursor` of the previous answer (with the same filters), or the `Secinv-Changes-Cursor` header of a list answer or an export (with any filters).',
  },
  perPage: {
    kind: 'integer',
    min: 1,
    max: 1000,
    default: 100,
    description: 'Batch size, an integer from 1 to 1000 (default 100).',
  },
} as const;

export const listChangesSpec = querySpec(
  {
    types: { kind: 'list', item: { type: 'enum', values: changeTypes }, description: 'Change types.' },
    assetIds: strings('The asset changed, or the asset of the finding or risk: matched exactly.'),
    vulnerabilityIds: strings('Finding changes of these vulnerability ids, matched exactly.'),
    riskIds: strings('Risk changes of these risk ids, matched exactly.'),
    since: { kind: 'datetime', description: 'Changes committed at or after this time.' },
    ...pageParams,
    format: formatParam,
  },
  { paging: ['perPage'] },
);
export type ListChangesQuery = ParsedQuery<typeof listChangesSpec.params>;
export const listChangesQuery = defineQuery(listChangesSpec);

/** One scan's changes: no filter but the scan. */
export const scanChangesSpec = querySpec({ ...pageParams });
export type ScanChangesQuery = ParsedQuery<typeof scanChangesSpec.params>;
export const scanChangesQuery = defineQuery(scanChangesSpec);

queryExamples(listChangesQuery, { types: 'finding.opened,finding.resolved', since: '2026-05-01', perPage: '500' });
queryExamples(scanChangesQuery, { perPage: '1000' });

// Generic, so that the typed client's Change (Static of this schema) keeps each field's type.
const nullable = <T extends TSchema>(schema: T, description: string) =>
  Type.Union([schema, Type.Null()], { description });

export const Change = Type.Object(
  {
    seq: Type.String({
      description: "Its position in the tenant's log: compare positions only for equality, the order is the list's",
    }),
    at: Type.String({ format: 'date-time', description: 'When the write that made it committed' }),
    type: StringEnum(changeTypes, 'What happened to the record'),
    assetId: nullable(Type.String(), 'The asset changed, or the asset of the finding or risk'),
    vulnerabilityId: nullable(Type.String(), "For finding changes: the finding's vulnerabilityId"),
    riskId: nullable(Type.String(), "For risk changes: the risk's id"),
    cause: Type.Object(
      {
        kind: StringEnum(causeKinds, 'What made the write'),
        scanId: Type.Optional(Type.String({ description: 'The scan, uploaded or recorded by `secinv ingest`' })),
        keyId: Type.Optional(Type.String({ description: 'The key that uploaded the scan' })),
        feed: Type.Optional(Type.String({ description: 'The feed loaded' })),
        feedVersion: Type.Optional(Type.String({ description: "The loaded feed's version" })),
      },
      { description: 'Why it changed' },
    ),
    fields: Type.Array(Type.Object({ name: Type.String(), before: Type.Unknown(), after: Type.Unknown() }), {
      description:
        'For updates (and risk dismissals and reopenings): each tracked field that changed — severityLevel, hasKev, ' +
        'hasExploit, isExempted, packages (a count) of findings; isPubliclyExposed, riskScore of assets; ' +
        'severityLevel, score, lifecycleState of risks. Empty for other changes.',
    }),
    record: Type.Union([ref('Asset'), ref('Vulnerability'), ref('Risk'), Type.Null()], {
      description:
        'The record as the API serves it now, or, for finding.resolved, risk.resolved and asset.removed, as it was when it left; null when it no longer exists',
    }),
  },
  { description: "A change in the tenant's inventory" },
);

export const ListChangesResponse = Type.Object({
  data: Type.Array(Change, { description: 'The changes of this batch, in log order' }),
  meta: Type.Object({
    perPage: Type.Integer({ description: 'The batch size of this response' }),
    cursor: Type.String({
      description: 'Never null: pass it as `cursor` to read on; an empty `data` means the log is read to its end',
    }),
  }),
});

export const changeExample = {
  seq: '1042',
  at: '2026-05-04T09:13:02.511Z',
  type: 'finding.updated',
  assetId: 'sirn:assets:4f10d8f8-7ac2-44e9-abd3-e1482e23fdff:aws:ecr:image:us-east-1:checkout:1.4.2',
  vulnerabilityId: 'CVE-2024-3094',
  riskId: null,
  cause: { kind: 'feed', feed: 'kev', feedVersion: '2026.05.04' },
  fields: [{ name: 'hasKev', before: false, after: true }],
  record: null,
};
