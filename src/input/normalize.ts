// Turns an imported JSON value into the stored shape of a resource by walking the resource's schema: every field of the
// schema is present afterwards (null, [] or false when it has no value), timestamps are normalised, enums take their
// canonical case, and every type mismatch is reported with its field path. Fields the schema does not name are dropped.
import { isUuid } from '../domain/ids.js';
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

/**
 * A schema node made into a function once (docs/DESIGN.md §50): it normalises the value found at `name` of `parent`
 * (`name` null: at `parent` itself). Walking the schema for every value cost twice what `JSON.parse` of the record
 * did; the functions know their node's type, enum and children, and make a path only for a container or a problem.
 */
type Normalizer = (value: unknown, parent: Path, name: string | number | null, problems: FieldProblem[]) => unknown;

const at = (parent: Path, name: string | number | null): Path => (name === null ? parent : { parent, name });

const compiled = new WeakMap<JsonSchema, Normalizer>();
function compile(schema: JsonSchema): Normalizer {
  let found = compiled.get(schema);
  if (found === undefined) {
    found = build(schema);
    compiled.set(schema, found);
  }
  return found;
}

export function normalizeValue(value: unknown, schemaObject: object, path: string, problems: FieldProblem[]): unknown {
  return compile(schemaObject)(value, path, null, problems);
}

function build(schema: JsonSchema): Normalizer {
  if (schema.anyOf) {
    const nullable = schema.anyOf.some((s) => s.type === 'null');
    const options = schema.anyOf.filter((s) => s.type !== 'null');
    const only = options.length === 1 ? compile(options[0] as JsonSchema) : undefined;
    const types = options.map((s) => s.type);
    return (value, parent, name, problems) => {
      if (value === undefined || value === null) {
        if (!nullable) fail(problems, at(parent, name), 'is required');
        return null;
      }
      if (only) return only(value, parent, name, problems);
      // A union of scalar types (a resource tag Value is a string or a boolean).
      if (types.includes(typeof value)) return value;
      fail(problems, at(parent, name), `must be ${types.join(' or ')}, not ${describe(value)}`);
      return null;
    };
  }
  if (schema.type === 'boolean')
    return (value, parent, name, problems) => {
      if (value === undefined || value === null) return false;
      if (typeof value === 'boolean') return value;
      fail(problems, at(parent, name), `must be a boolean, not ${describe(value)}`);
      return false;
    };
  if (schema.type === 'array') {
    const item = compile(schema.items ?? {});
    return (value, parent, name, problems) => {
      if (value === undefined || value === null) return [];
      if (!Array.isArray(value)) {
        fail(problems, at(parent, name), `must be an array, not ${describe(value)}`);
        return [];
      }
      const path = at(parent, name);
      const out: unknown[] = [];
      for (let i = 0; i < value.length; i += 1) out.push(item(value[i], path, i, problems));
      return out;
    };
  }
  const present = presentValue(schema);
  return (value, parent, name, problems) => {
    if (value === undefined || value === null) {
      fail(problems, at(parent, name), 'is required');
      return null;
    }
    return present(value, parent, name, problems);
  };
}

/** The normaliser of a value that is neither undefined nor null, for the node types that require one. */
function presentValue(schema: JsonSchema): Normalizer {
  switch (schema.type) {
    case 'string':
      return stringValue(schema);
    case 'number':
    case 'integer': {
      const integer = schema.type === 'integer';
      return (value, parent, name, problems) => {
        if (typeof value === 'number' && Number.isFinite(value) && (!integer || Number.isSafeInteger(value)))
          return value;
        fail(problems, at(parent, name), `must be ${integer ? 'an integer' : 'a number'}, not ${describe(value)}`);
        return null;
      };
    }
    case 'object': {
      const properties = Object.entries(schema.properties ?? {}).map(([key, s]): [string, Normalizer] => [
        key,
        compile(s),
      ]);
      return (value, parent, name, problems) => {
        if (!isPlainObject(value)) {
          fail(problems, at(parent, name), `must be an object, not ${describe(value)}`);
          return null;
        }
        const path = at(parent, name);
        if (properties.length === 0) {
          checkFreeValue(value, path, problems);
          return value;
        }
        const out: Record<string, unknown> = {};
        for (const [key, normalizeProperty] of properties)
          out[key] = normalizeProperty(value[key], path, key, problems);
        return out;
      };
    }
    default:
      return (value) => value;
  }
}

function stringValue(schema: JsonSchema): Normalizer {
  const text = (value: unknown, parent: Path, name: string | number | null, problems: FieldProblem[]) => {
    if (typeof value !== 'string') {
      fail(problems, at(parent, name), `must be a string, not ${describe(value)}`);
      return null;
    }
    if (value.includes(NUL)) {
      fail(problems, at(parent, name), NUL_MESSAGE);
      return null;
    }
    return value;
  };
  if (schema.enum) {
    // Enum values by their lower-cased text (the first of equal ones).
    const values = new Map<string, string>();
    for (const v of schema.enum) if (!values.has(v.toLowerCase())) values.set(v.toLowerCase(), v);
    const list = schema.enum.join(', ');
    return (value, parent, name, problems) => {
      const checked = text(value, parent, name, problems);
      if (checked === null) return null;
      const found = values.get(checked.toLowerCase());
      if (found !== undefined) return found;
      fail(problems, at(parent, name), `must be one of ${list}, not '${checked}'`);
      return null;
    };
  }
  if (schema.format === 'date-time')
    return (value, parent, name, problems) => {
      const checked = text(value, parent, name, problems);
      if (checked === null) return null;
      const normalized = normalizeTimestamp(checked);
      if (normalized !== null) return normalized;
      fail(problems, at(parent, name), `must be an RFC 3339 date-time, not '${checked}'`);
      return null;
    };
  if (schema.format === 'uuid')
    return (value, parent, name, problems) => {
      const checked = text(value, parent, name, problems);
      if (checked === null || isUuid(checked)) return checked;
      fail(problems, at(parent, name), `must be a UUID (8-4-4-4-12 hexadecimal digits), not '${checked}'`);
      return null;
    };
  if (schema.format === 'date')
    return (value, parent, name, problems) => {
      const checked = text(value, parent, name, problems);
      if (checked === null) return null;
      if (isCalendarDate(checked)) return checked;
      fail(problems, at(parent, name), `must be a yyyy-MM-dd date, not '${checked}'`);
      return null;
    };
  return text;
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
