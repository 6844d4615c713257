// Turns an imported JSON value into the stored shape of a resource by walking the resource's schema: every field of the
// schema is present afterwards (null, [] or false when it has no value), timestamps are normalised, enums take their
// canonical case, and every type mismatch is reported with its field path. Fields the schema does not name are dropped.
import { isCalendarDate, normalizeTimestamp } from '../domain/time.js';

export interface FieldProblem {
  path: string;
  message: string;
}

interface JsonSchema {
  type?: string;
  anyOf?: JsonSchema[];
  enum?: string[];
  format?: string;
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  additionalProperties?: boolean;
}

const NUL = '\u0000';
const NUL_MESSAGE = 'must not contain the NUL character (U+0000)';
/** How deep a free-form object (raw data, metadata) may nest: far beyond any real document, far below a stack's depth. */
export const MAX_FREE_DEPTH = 64;
/** Problems reported per free-form object at most: one bad document should not flood the report. */
const MAX_FREE_PROBLEMS = 10;

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const describe = (value: unknown): string =>
  value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`;

/**
 * Where a value is, made text only when a problem is reported: an import or ingest normalises millions of fields and
 * reports few problems. With the per-node work below done once, normalising a finding costs half what it did
 * (docs/DESIGN.md §29).
 */
type Path = string | { parent: Path; name: string | number };
const pathText = (path: Path): string =>
  typeof path === 'string'
    ? path
    : typeof path.name === 'number'
      ? `${pathText(path.parent)}[${path.name}]`
      : `${pathText(path.parent)}.${path.name}`;

const fail = (problems: FieldProblem[], path: Path, message: string) =>
  void problems.push({ path: pathText(path), message });

/** What each schema node needs on every call, worked out once per node. */
interface Prepared {
  nullable: boolean;
  options: JsonSchema[];
  properties: [string, JsonSchema][];
  /** Enum values by their lower-cased text (the first of equal ones, as `find` returned). */
  enumValues: Map<string, string> | null;
}
const prepared = new WeakMap<JsonSchema, Prepared>();
function prepare(schema: JsonSchema): Prepared {
  let found = prepared.get(schema);
  if (found === undefined) {
    const enumValues = schema.enum ? new Map<string, string>() : null;
    for (const v of schema.enum ?? []) if (!enumValues?.has(v.toLowerCase())) enumValues?.set(v.toLowerCase(), v);
    found = {
      nullable: schema.anyOf?.some((s) => s.type === 'null') ?? false,
      options: schema.anyOf?.filter((s) => s.type !== 'null') ?? [],
      properties: Object.entries(schema.properties ?? {}),
      enumValues,
    };
    prepared.set(schema, found);
  }
  return found;
}

export function normalizeValue(value: unknown, schemaObject: object, path: string, problems: FieldProblem[]): unknown {
  return normalize(value, schemaObject, path, problems);
}

function normalize(value: unknown, schema: JsonSchema, path: Path, problems: FieldProblem[]): unknown {
  if (schema.anyOf) {
    const { nullable, options } = prepare(schema);
    if (value === undefined || value === null) {
      if (nullable) return null;
      fail(problems, path, 'is required');
      return null;
    }
    const only = options.length === 1 ? options[0] : undefined;
    if (only) return normalize(value, only, path, problems);
    // A union of scalar types (a resource tag Value is a string or a boolean).
    if (options.some((s) => s.type === typeof value)) return value;
    fail(problems, path, `must be ${options.map((s) => s.type).join(' or ')}, not ${describe(value)}`);
    return null;
  }
  if (schema.type === 'boolean') {
    if (value === undefined || value === null) return false;
    if (typeof value === 'boolean') return value;
    fail(problems, path, `must be a boolean, not ${describe(value)}`);
    return false;
  }
  if (schema.type === 'array') {
    if (value === undefined || value === null) return [];
    if (!Array.isArray(value)) {
      fail(problems, path, `must be an array, not ${describe(value)}`);
      return [];
    }
    const items = schema.items ?? {};
    return value.map((item, i) => normalize(item, items, { parent: path, name: i }, problems));
  }
  if (value === undefined || value === null) {
    fail(problems, path, 'is required');
    return null;
  }
  switch (schema.type) {
    case 'string':
      return normalizeString(value, schema, path, problems);
    case 'number':
    case 'integer': {
      const ok =
        typeof value === 'number' &&
        Number.isFinite(value) &&
        (schema.type === 'number' || Number.isSafeInteger(value));
      if (ok) return value;
      fail(problems, path, `must be ${schema.type === 'integer' ? 'an integer' : 'a number'}, not ${describe(value)}`);
      return null;
    }
    case 'object': {
      if (!isPlainObject(value)) {
        fail(problems, path, `must be an object, not ${describe(value)}`);
        return null;
      }
      const { properties } = prepare(schema);
      if (properties.length === 0) {
        checkFreeValue(value, path, problems);
        return value;
      }
      const out: Record<string, unknown> = {};
      for (const [name, propertySchema] of properties) {
        out[name] = normalize(value[name], propertySchema, { parent: path, name }, problems);
      }
      return out;
    }
    default:
      return value;
  }
}

function normalizeString(value: unknown, schema: JsonSchema, path: Path, problems: FieldProblem[]): unknown {
  if (typeof value !== 'string') {
    fail(problems, path, `must be a string, not ${describe(value)}`);
    return null;
  }
  if (value.includes(NUL)) {
    fail(problems, path, NUL_MESSAGE);
    return null;
  }
  const { enumValues } = prepare(schema);
  if (enumValues !== null) {
    const found = enumValues.get(value.toLowerCase());
    if (found !== undefined) return found;
    fail(problems, path, `must be one of ${(schema.enum ?? []).join(', ')}, not '${value}'`);
    return null;
  }
  if (schema.format === 'date-time') {
    const normalized = normalizeTimestamp(value);
    if (normalized !== null) return normalized;
    fail(problems, path, `must be an RFC 3339 date-time, not '${value}'`);
    return null;
  }
  if (schema.format === 'date' && !isCalendarDate(value)) {
    fail(problems, path, `must be a yyyy-MM-dd date, not '${value}'`);
    return null;
  }
  return value;
}

/**
 * A free-form object (raw data, metadata) is stored as it is, so it is checked as a whole: no U+0000 in a key or a
 * string (PostgreSQL text cannot hold it), and no nesting deeper than MAX_FREE_DEPTH (it is walked without recursion,
 * so a document nested 100,000 deep is reported, not a stack overflow).
 */
function checkFreeValue(root: Record<string, unknown>, rootPath: Path, problems: FieldProblem[]): void {
  const stack: [unknown, Path, number][] = [[root, rootPath, 1]];
  let found = 0;
  const report = (path: Path, message: string) => {
    found += 1;
    if (found <= MAX_FREE_PROBLEMS) fail(problems, path, message);
  };
  while (stack.length > 0) {
    const [value, path, depth] = stack.pop()!;
    if (typeof value === 'string') {
      if (value.includes(NUL)) report(path, NUL_MESSAGE);
      continue;
    }
    if (typeof value !== 'object' || value === null) continue;
    if (depth > MAX_FREE_DEPTH) {
      report(path, `nests deeper than ${MAX_FREE_DEPTH} levels`);
      continue;
    }
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i -= 1) stack.push([value[i], { parent: path, name: i }, depth + 1]);
      continue;
    }
    for (const [key, child] of Object.entries(value)) {
      if (key.includes(NUL)) report({ parent: path, name: key.replaceAll(NUL, '\\u0000') }, `key ${NUL_MESSAGE}`);
      stack.push([child, { parent: path, name: key }, depth + 1]);
    }
  }
}
