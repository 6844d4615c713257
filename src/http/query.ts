// Query parameters are declared once per operation as a QuerySpec (src/domain/query.ts); defineQuery() turns it into the TypeBox schema
// (OpenAPI and route docs), the parser that enforces the request rules of the contract (unknown names, empty values,
// list unions, repeated scalars, case-insensitive enums, strict booleans/numbers/dates, ranges), and the TypeScript
// type of the parsed query. Fastify runs the parser as the querystring validator (see validatorCompiler below).
import { Type, type TObject, type TSchema } from 'typebox';
import { ApiError, type Problem } from '../domain/errors.js';
import { isUuid } from '../domain/ids.js';
import type { ItemSpec, ParamSpec, ParsedQuery, QuerySpec } from '../domain/query.js';
import { normalizeTimestamp } from '../domain/time.js';

export interface QueryDefinition<S extends Record<string, ParamSpec>> {
  params: S;
  schema: TObject;
  parse(raw: Record<string, unknown>): ParsedQuery<S>;
}

const parsers = new WeakMap<object, (raw: Record<string, unknown>) => unknown>();

/**
 * The list format negotiated from the Accept header (src/http/export.ts), set on the raw query under this key before
 * the parser runs, so that the export rules are checked with every other parameter rule and one 400 lists all of them.
 * A symbol: it is not a query parameter, and no query string can set it.
 */
export const ACCEPTED_FORMAT = Symbol('format from Accept');

export function defineQuery<const S extends Record<string, ParamSpec>>({
  params,
  options,
}: QuerySpec<S>): QueryDefinition<S> {
  const properties: Record<string, TSchema> = {};
  for (const [name, spec] of Object.entries(params)) properties[name] = Type.Optional(paramSchema(spec));
  const schema = Type.Object(properties, { additionalProperties: false });

  const parse = (raw: Record<string, unknown>): ParsedQuery<S> => {
    const problems: Problem[] = [];
    const out: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(raw)) {
      const spec = params[name];
      if (!spec) {
        problems.push({ code: 'unknown_parameter', field: name, message: `unknown query parameter '${name}'` });
        continue;
      }
      const values = Array.isArray(value) ? value.map(String) : [String(value)];
      const result = parseParam(name, spec, values);
      if ('problem' in result) problems.push({ code: 'invalid_parameter', field: name, message: result.problem });
      else out[name] = result.value;
    }
    const accepted = (raw as { [ACCEPTED_FORMAT]?: string })[ACCEPTED_FORMAT];
    if (accepted !== undefined && 'format' in params && !('format' in raw)) out.format = accepted;
    for (const [name, spec] of Object.entries(params)) {
      if (
        out[name] === undefined &&
        'default' in spec &&
        spec.default !== undefined &&
        !problems.some((p) => p.field === name)
      ) {
        out[name] = spec.default;
      }
    }
    for (const [start, end] of options.ranges ?? []) {
      const a = out[start],
        b = out[end];
      if (typeof a === 'string' && typeof b === 'string' && a > b) {
        problems.push({ code: 'invalid_parameter', field: start, message: `${start} must not be after ${end}` });
      }
    }
    for (const [name, needed] of options.requires ?? []) {
      if (name in raw && !(needed in raw)) {
        problems.push({ code: 'invalid_parameter', field: name, message: `${name} requires ${needed}` });
      }
    }
    for (const [name, other, reason] of options.conflicts ?? []) {
      if (name in raw && other in raw) {
        problems.push({
          code: 'invalid_parameter',
          field: name,
          message: `${name} and ${other} exclude each other: ${reason}`,
        });
      }
    }
    const format = out.format;
    if (typeof format === 'string' && format !== 'json') {
      for (const name of options.paging ?? []) {
        if (name in raw) {
          problems.push({
            code: 'invalid_parameter',
            field: name,
            message: `${name} does not apply to an export (format ${format}), which sends every matching record`,
          });
        }
      }
    }
    if (problems.length > 0) throw new ApiError(problems);
    return out as ParsedQuery<S>;
  };
  parsers.set(schema, parse);
  return { params, schema, parse };
}

type Result = { value: unknown } | { problem: string };

function parseParam(name: string, spec: ParamSpec, values: string[]): Result {
  if (values.some((v) => v === '')) return { problem: `${name} must not be empty` };
  // PostgreSQL text cannot hold U+0000 and no stored value contains it: refused here, the same on both databases.
  if (values.some((v) => v.includes('\u0000')))
    return { problem: `${name} must not contain the NUL character (U+0000)` };
  if (spec.kind === 'list') return parseList(name, spec, values);
  if (values.length > 1) return { problem: `${name} must be given at most once` };
  const v = values[0] as string;
  switch (spec.kind) {
    case 'enum': {
      const found = matchEnum(spec.values, v);
      return found === undefined ? { problem: `${name} must be one of ${spec.values.join(', ')}` } : { value: found };
    }
    case 'boolean': {
      const lower = v.toLowerCase();
      return lower === 'true' || lower === 'false'
        ? { value: lower === 'true' }
        : { problem: `${name} must be true or false` };
    }
    case 'integer': {
      const n = /^\d+$/.test(v) ? Number(v) : NaN;
      return n >= spec.min && n <= spec.max
        ? { value: n }
        : { problem: `${name} must be an integer from ${spec.min} to ${spec.max}` };
    }
    case 'decimal': {
      const n = /^\d+(\.\d+)?$/.test(v) ? Number(v) : NaN;
      return n >= spec.min && n <= spec.max
        ? { value: n }
        : { problem: `${name} must be a number from ${spec.min} to ${spec.max}` };
    }
    case 'datetime': {
      const t = normalizeTimestamp(v);
      return t === null ? { problem: `${name} must be an RFC 3339 date-time or a yyyy-MM-dd date` } : { value: t };
    }
    case 'string':
      return { value: v };
  }
}

const ENVIRONMENT_NAMES = ['production', 'non-production'] as const;

function parseList(name: string, spec: Extract<ParamSpec, { kind: 'list' }>, values: string[]): Result {
  const items = new Set<unknown>();
  const bad: string[] = [];
  for (const value of values) {
    for (const piece of value.split(',')) {
      const item = piece.trim();
      if (item === '') continue;
      const parsed = parseItem(spec.item, item);
      if (parsed === undefined) bad.push(item);
      else items.add(parsed);
    }
  }
  if (bad.length > 0)
    return { problem: `${name} has invalid item(s) ${bad.map((b) => `'${b}'`).join(', ')}: ${itemRule(spec.item)}` };
  if (items.size === 0) return { problem: `${name} must list at least one item` };
  if (spec.maxItems !== undefined && items.size > spec.maxItems)
    return { problem: `${name} must list at most ${spec.maxItems} items` };
  return { value: [...items] };
}

function parseItem(item: ItemSpec, text: string): unknown {
  switch (item.type) {
    case 'string':
      return text;
    case 'integer':
      return /^\d{1,15}$/.test(text) ? Number(text) : undefined;
    case 'enum':
      return matchEnum(item.values, text);
    case 'environment':
      return isUuid(text) ? text.toLowerCase() : matchEnum(ENVIRONMENT_NAMES, text);
  }
}

function itemRule(item: ItemSpec): string {
  switch (item.type) {
    case 'string':
      return 'any text';
    case 'integer':
      return 'each item must be an integer';
    case 'enum':
      return `each item must be one of ${item.values.join(', ')}`;
    case 'environment':
      return 'each item must be an environment UUID, production or non-production';
  }
}

const matchEnum = <V extends string>(values: readonly V[], text: string): V | undefined => {
  const lower = text.toLowerCase();
  return values.find((v) => v.toLowerCase() === lower);
};

function paramSchema(spec: ParamSpec): TSchema {
  const description = spec.description;
  switch (spec.kind) {
    case 'list': {
      const itemNote = spec.item.type === 'enum' ? ` Items: ${spec.item.values.join(', ')} (case-insensitive).` : '';
      const limit = spec.maxItems === undefined ? '' : ` At most ${spec.maxItems} items.`;
      return Type.String({ description: `${description} Comma-separated.${itemNote}${limit}`, minLength: 1 });
    }
    case 'enum':
      return Type.String({
        description: `${description} One of ${spec.values.join(', ')} (case-insensitive).`,
        ...(spec.default === undefined ? {} : { default: spec.default }),
      });
    case 'boolean':
      return Type.String({
        description: `${description} true or false.`,
        enum: ['true', 'false'],
        ...(spec.default === undefined ? {} : { default: String(spec.default) }),
      });
    case 'integer':
      return Type.String({
        description,
        pattern: '^[0-9]+$',
        'x-minimum': spec.min,
        'x-maximum': spec.max,
        ...(spec.default === undefined ? {} : { default: String(spec.default) }),
      });
    case 'decimal':
      return Type.String({
        description,
        pattern: '^[0-9]+(\\.[0-9]+)?$',
        'x-minimum': spec.min,
        'x-maximum': spec.max,
      });
    case 'datetime':
      return Type.String({ description: `${description} RFC 3339 date-time or yyyy-MM-dd.` });
    case 'string':
      return Type.String({ description, minLength: 1 });
  }
}

/**
 * Fastify validator compiler: querystring schemas made by defineQuery() are validated by their own parser, whose
 * result replaces request.query. Other schemas (path parameters, documented for OpenAPI) are not re-validated here.
 */
export const validatorCompiler = ({ schema, httpPart }: { schema: object; httpPart?: string }) => {
  const parse = httpPart === 'querystring' ? parsers.get(schema) : undefined;
  if (!parse) return () => true;
  return (data: unknown) => {
    try {
      return { value: parse((data ?? {}) as Record<string, unknown>) };
    } catch (error) {
      return { error: error as Error };
    }
  };
};
