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

export function normalizeValue(value: unknown, schemaObject: object, path: string, problems: FieldProblem[]): unknown {
  const schema = schemaObject as JsonSchema;
  if (schema.anyOf) {
    const nullable = schema.anyOf.some((s) => s.type === 'null');
    const options = schema.anyOf.filter((s) => s.type !== 'null');
    if (value === undefined || value === null) {
      if (nullable) return null;
      problems.push({ path, message: 'is required' });
      return null;
    }
    const only = options.length === 1 ? options[0] : undefined;
    if (only) return normalizeValue(value, only, path, problems);
    // A union of scalar types (a resource tag Value is a string or a boolean).
    if (options.some((s) => s.type === typeof value)) return value;
    problems.push({ path, message: `must be ${options.map((s) => s.type).join(' or ')}, not ${describe(value)}` });
    return null;
  }
  if (schema.type === 'boolean') {
    if (value === undefined || value === null) return false;
    if (typeof value === 'boolean') return value;
    problems.push({ path, message: `must be a boolean, not ${describe(value)}` });
    return false;
  }
  if (schema.type === 'array') {
    if (value === undefined || value === null) return [];
    if (!Array.isArray(value)) {
      problems.push({ path, message: `must be an array, not ${describe(value)}` });
      return [];
    }
    const items = schema.items ?? {};
    return value.map((item, i) => normalizeValue(item, items, `${path}[${i}]`, problems));
  }
  if (value === undefined || value === null) {
    problems.push({ path, message: 'is required' });
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
      problems.push({
        path,
        message: `must be ${schema.type === 'integer' ? 'an integer' : 'a number'}, not ${describe(value)}`,
      });
      return null;
    }
    case 'object': {
      if (!isPlainObject(value)) {
        problems.push({ path, message: `must be an object, not ${describe(value)}` });
        return null;
      }
      const properties = schema.properties ?? {};
      if (Object.keys(properties).length === 0) {
        checkFreeValue(value, path, problems);
        return value;
      }
      const out: Record<string, unknown> = {};
      for (const [name, propertySchema] of Object.entries(properties)) {
        out[name] = normalizeValue(value[name], propertySchema, `${path}.${name}`, problems);
      }
      return out;
    }
    default:
      return value;
  }
}

function normalizeString(value: unknown, schema: JsonSchema, path: string, problems: FieldProblem[]): unknown {
  if (typeof value !== 'string') {
    problems.push({ path, message: `must be a string, not ${describe(value)}` });
    return null;
  }
  if (value.includes(NUL)) {
    problems.push({ path, message: NUL_MESSAGE });
    return null;
  }
  if (schema.enum) {
    const lower = value.toLowerCase();
    const found = schema.enum.find((v) => v.toLowerCase() === lower);
    if (found !== undefined) return found;
    problems.push({ path, message: `must be one of ${schema.enum.join(', ')}, not '${value}'` });
    return null;
  }
  if (schema.format === 'date-time') {
    const normalized = normalizeTimestamp(value);
    if (normalized !== null) return normalized;
    problems.push({ path, message: `must be an RFC 3339 date-time, not '${value}'` });
    return null;
  }
  if (schema.format === 'date' && !isCalendarDate(value)) {
    problems.push({ path, message: `must be a yyyy-MM-dd date, not '${value}'` });
    return null;
  }
  return value;
}

/**
 * A free-form object (raw data, metadata) is stored as it is, so it is checked as a whole: no U+0000 in a key or a
 * string (PostgreSQL text cannot hold it), and no nesting deeper than MAX_FREE_DEPTH (it is walked without recursion,
 * so a document nested 100,000 deep is reported, not a stack overflow).
 */
function checkFreeValue(root: Record<string, unknown>, rootPath: string, problems: FieldProblem[]): void {
  const stack: [unknown, string, number][] = [[root, rootPath, 1]];
  let found = 0;
  const report = (path: string, message: string) => {
    found += 1;
    if (found <= MAX_FREE_PROBLEMS) problems.push({ path, message });
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
      for (let i = value.length - 1; i >= 0; i -= 1) stack.push([value[i], `${path}[${i}]`, depth + 1]);
      continue;
    }
    for (const [key, child] of Object.entries(value)) {
      if (key.includes(NUL)) report(`${path}.${key.replaceAll(NUL, '\\u0000')}`, `key ${NUL_MESSAGE}`);
      stack.push([child, `${path}.${key}`, depth + 1]);
    }
  }
}
