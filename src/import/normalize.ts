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
      if (Object.keys(properties).length === 0) return value;
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
