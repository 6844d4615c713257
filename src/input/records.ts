// Per-kind validation of imported records (docs/IMPORT.md): identity rules, required fields, and normalisation through
// the resource schemas. Ingest holds a scan's assets and findings to the same rules (src/ingest/finding-record.ts).
// Cross-record rules (tenant known, organizationId, a finding's asset) live in src/import/ (reader.ts, importer.ts).
import { Type } from 'typebox';
import { Asset, derivedAssetFields, secretCountFields } from '../domain/assets.js';
import { Exemption, Vulnerability, derivedVulnerabilityFields } from '../domain/vulnerabilities.js';
import { idProblem } from '../domain/ids.js';
import { LONG_KEY_BYTES, SHORT_KEY_BYTES, lengthProblem } from '../domain/limits.js';
import { hasVendorFix, secretCounts, severityLevelValue } from '../domain/derived.js';
import type { FindingSeverity } from '../domain/enums.js';
import { Integration, Risk } from '../domain/risks.js';
import { FreeObject, Nullable, NullableString, NullableUuid, Uuid } from '../domain/schema.js';
import type { ImportKind, RecordsByKind, StoredAsset, StoredVulnerability } from '../domain/records.js';
import { normalizeValue, type FieldProblem } from './normalize.js';

interface JsonObjectSchema {
  type: 'object';
  properties: Record<string, unknown>;
}

const omit = (schema: JsonObjectSchema, names: readonly string[]): JsonObjectSchema => ({
  type: 'object',
  properties: Object.fromEntries(Object.entries(schema.properties).filter(([name]) => !names.includes(name))),
});
const extend = (schema: JsonObjectSchema, extra: Record<string, unknown>): JsonObjectSchema => ({
  type: 'object',
  properties: { ...schema.properties, ...extra },
});

// api.md names tenant, organization, integration and exemption ids and rules' asset group ids UUIDs, and the
// environmentIds filter takes environments by UUID: an imported one is a UUID too, checked by the schema in place of
// the identity rule (which a UUID meets). An environment or asset group whose id were not one could not be named by a
// filter or a rule.

const schemas: Record<ImportKind, JsonObjectSchema> = {
  tenant: Type.Object({ tenantId: Uuid(), organizationId: Uuid(), name: NullableString() }),
  environment: Type.Object({
    tenantId: Uuid(),
    environmentId: Uuid(),
    name: NullableString(),
    isProduction: Type.Boolean(),
  }),
  integration: extend(Integration, { environmentId: NullableUuid() }),
  assetGroup: Type.Object({
    tenantId: Uuid(),
    assetGroupId: Uuid(),
    name: NullableString(),
    assetIds: Type.Array(Type.String()),
  }),
  exemption: Type.Object({ tenantId: Uuid(), exemptionId: Uuid(), exemption: Exemption }),
  asset: extend(omit(Asset, [...derivedAssetFields, ...secretCountFields]), { rawData: Nullable(FreeObject()) }),
  vulnerability: omit(Vulnerability, derivedVulnerabilityFields),
  risk: Risk,
};

/**
 * The identity fields per kind that the identity-string rule checks, with the limit of each in UTF-8 bytes. The other
 * identity fields (tenant, environment, integration, asset group and exemption ids) are UUIDs, which the kind's schema
 * checks and which meet the rule and every limit.
 */
const identityFields: Record<ImportKind, readonly (readonly [field: string, maxBytes: number])[]> = {
  tenant: [],
  environment: [],
  integration: [],
  assetGroup: [],
  exemption: [],
  asset: [['id', LONG_KEY_BYTES]],
  vulnerability: [
    ['assetId', LONG_KEY_BYTES],
    ['vulnerabilityId', SHORT_KEY_BYTES],
  ],
  risk: [['id', LONG_KEY_BYTES]],
};

/**
 * The other texts an index holds, per kind, as paths into the normalised record (`[]` walks an array), each at most
 * LONG_KEY_BYTES; `service` is indexed lower-cased too (docs/IMPORT.md, "Length limits").
 */
const indexedTexts: Record<ImportKind, readonly string[]> = {
  tenant: [],
  environment: [],
  integration: [],
  assetGroup: ['assetIds[]'],
  exemption: [],
  asset: ['name', 'region', 'service', 'resourceType'],
  vulnerability: ['packages[].packageName', 'packages[].targetName'],
  risk: ['primaryAssetId', 'riskTypeId'],
};

function checkIdentity(kind: ImportKind, record: Record<string, unknown>, problems: FieldProblem[]): void {
  for (const [field, maxBytes] of identityFields[kind]) {
    const value = record[field];
    const path = `record.${field}`;
    if (value === undefined || value === null) problems.push({ path, message: 'is required' });
    else if (typeof value !== 'string') problems.push({ path, message: 'must be a string' });
    else {
      const problem = idProblem(value, maxBytes);
      if (problem !== null) problems.push({ path, message: problem });
    }
  }
}

interface Step {
  name: string;
  /** An array field: each of its items is walked. */
  list: boolean;
}
/** Each kind's indexed paths as steps, split once; `lowered`: the text is indexed lower-cased too (`service`). */
const indexedSteps = Object.fromEntries(
  Object.entries(indexedTexts).map(([kind, paths]) => [
    kind,
    paths.map((path) => ({
      steps: path
        .split('.')
        .map((step): Step =>
          step.endsWith('[]') ? { name: step.slice(0, -2), list: true } : { name: step, list: false },
        ),
      lowered: path.endsWith('.service') || path === 'service',
    })),
  ]),
) as Record<ImportKind, { steps: Step[]; lowered: boolean }[]>;

/** Reports each indexed text of a normalised record over its limit, with its path (made only for a problem). */
function checkIndexedTexts(kind: ImportKind, record: Record<string, unknown>, problems: FieldProblem[]): void {
  for (const { steps, lowered } of indexedSteps[kind]) {
    const visit = (value: unknown, depth: number, path: () => string): void => {
      const step = steps[depth];
      if (step === undefined) {
        if (typeof value !== 'string') return;
        const problem = lengthProblem(value, LONG_KEY_BYTES, lowered ? value.toLowerCase() : value);
        if (problem !== null) problems.push({ path: path(), message: problem });
      } else if (typeof value !== 'object' || value === null) {
        return;
      } else if (step.list) {
        const items = (value as Record<string, unknown>)[step.name];
        if (Array.isArray(items))
          items.forEach((item, i) => visit(item, depth + 1, () => `${path()}.${step.name}[${i}]`));
      } else {
        visit((value as Record<string, unknown>)[step.name], depth + 1, () => `${path()}.${step.name}`);
      }
    };
    visit(record, 0, () => 'record');
  }
}

/**
 * Normalises one record of a kind. The caller has already put the tenant's organizationId on the record.
 * Returns the stored shape, or the problems found (paths start with `record.`).
 */
export function normalizeRecord<K extends ImportKind>(
  kind: K,
  raw: Record<string, unknown>,
): { value: RecordsByKind[K] } | { problems: FieldProblem[] } {
  const problems: FieldProblem[] = [];
  checkIdentity(kind, raw, problems);
  const normalized = normalizeValue(raw, schemas[kind], 'record', problems) as Record<string, unknown>;
  checkIndexedTexts(kind, normalized, problems);
  if (problems.length > 0) return { problems };
  return { value: shape(kind, normalized) as RecordsByKind[K] };
}

function shape(kind: ImportKind, n: Record<string, unknown>): RecordsByKind[ImportKind] {
  const tenantId = n.tenantId as string;
  switch (kind) {
    case 'tenant':
    case 'environment':
    case 'assetGroup':
      return n as unknown as RecordsByKind[typeof kind];
    case 'exemption': {
      // A criterion that sets nothing (an empty list or string) is stored as unset, null, so a listed exemption shows
      // which criteria really apply (docs/DESIGN.md §18).
      const exemption = n.exemption as Exemption;
      const unsetEmpty = <T>(value: T): T | null =>
        value === '' || (Array.isArray(value) && value.length === 0) ? null : value;
      const rules = exemption.rules.map((rule) => ({
        ...rule,
        vulnerabilityId: unsetEmpty(rule.vulnerabilityId),
        vulnerabilityIds: unsetEmpty(rule.vulnerabilityIds),
        assetIds: unsetEmpty(rule.assetIds),
        assetGroupIds: unsetEmpty(rule.assetGroupIds),
        assetRegions: unsetEmpty(rule.assetRegions),
        assetTags: unsetEmpty(rule.assetTags),
      }));
      return { tenantId, exemptionId: n.exemptionId as string, exemption: { ...exemption, rules } };
    }
    case 'integration': {
      const { environmentId, ...integration } = n;
      return {
        tenantId,
        integrationId: n.integrationId as string,
        environmentId: environmentId as string | null,
        integration: integration as RecordsByKind['integration']['integration'],
      };
    }
    case 'asset': {
      const { rawData, ...asset } = n;
      // Secret counts are the lengths of the secret arrays, whatever the file says.
      const counted = { ...asset, ...secretCounts(asset as Parameters<typeof secretCounts>[0]) };
      return {
        tenantId,
        asset: counted as unknown as StoredAsset,
        rawData: (rawData ?? {}) as Record<string, unknown>,
      };
    }
    case 'vulnerability': {
      // Set on the normalised object, which is the record's own: a copy of its ~25 fields was a tenth of normalising.
      n.severityLevelValue = severityLevelValue(n.severityLevel as FindingSeverity);
      n.hasVendorFix = hasVendorFix(n.packages as { fixedVersion: string | null }[]);
      return { tenantId, vulnerability: n as unknown as StoredVulnerability };
    }
    case 'risk':
      return { tenantId, risk: n as unknown as RecordsByKind['risk']['risk'] };
  }
}
