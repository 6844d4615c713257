// The vocabulary of list queries: each list operation declares its parameters once as a table of ParamSpecs (in the
// resource's domain file). The HTTP layer turns that table into the OpenAPI schema and the request parser
// (src/http/query.ts); storage receives the parsed query, whose type ParsedQuery derives from the same table.

export type ItemSpec =
  | { type: 'string' }
  | { type: 'integer' }
  | { type: 'enum'; values: readonly string[] }
  /** An environment UUID (returned lower-cased) or the names `production` / `non-production`. */
  | { type: 'environment' };

export type ParamSpec =
  | { kind: 'list'; item: ItemSpec; maxItems?: number; description: string }
  | { kind: 'enum'; values: readonly string[]; default?: string; description: string }
  | { kind: 'boolean'; default?: boolean; description: string }
  | { kind: 'integer'; min: number; max: number; default?: number; description: string }
  | { kind: 'decimal'; min: number; max: number; description: string }
  | { kind: 'datetime'; description: string }
  | { kind: 'string'; description: string };

type ItemOut<I> = I extends { type: 'enum'; values: readonly (infer V)[] }
  ? V
  : I extends { type: 'integer' }
    ? number
    : string;
type Out<P> = P extends { kind: 'list'; item: infer I }
  ? ItemOut<I>[]
  : P extends { kind: 'enum'; values: readonly (infer V)[] }
    ? V
    : P extends { kind: 'boolean' }
      ? boolean
      : P extends { kind: 'integer' | 'decimal' }
        ? number
        : string;
type WithDefault<S> = { [K in keyof S]: S[K] extends { default: unknown } ? K : never }[keyof S];

/** The parsed query: parameters with a default are always present, the others optional. */
export type ParsedQuery<S extends Record<string, ParamSpec>> = { [K in WithDefault<S>]: Out<S[K]> } & {
  [K in Exclude<keyof S, WithDefault<S>>]?: Out<S[K]>;
};

/** Rules across parameters. */
export interface QueryOptions {
  /** Every range `[start, end]` here is checked for start <= end. */
  ranges?: readonly (readonly [string, string])[];
  /** `[a, b]`: a may only be given together with b. */
  requires?: readonly (readonly [string, string])[];
  /** `[a, b]`: a and b may not be given together. */
  conflicts?: readonly (readonly [string, string, reason: string])[];
  /**
   * Parameters that shape a page (`page`, `perPage`, `cursor`, `includeTotal`): given with an export (a `format` other
   * than json, from the parameter or the Accept header), they are 400, since an export sends every matching record.
   */
  paging?: readonly string[];
}

/** How a list answers: `json` pages (the default) or the whole result streamed as NDJSON or CSV. */
export const listFormats = ['json', 'ndjson', 'csv'] as const;
export type ListFormat = (typeof listFormats)[number];
export type ExportFormat = Exclude<ListFormat, 'json'>;

/** The `format` parameter of every list. Without it, the Accept header chooses (json when it names none). */
export const formatParam = {
  kind: 'enum',
  values: listFormats,
  description:
    'json (default): the paged answer. ndjson or csv: every matching record (all pages) streamed as one download. ' +
    'Without it, `Accept: application/x-ndjson` or `Accept: text/csv` asks for the same; it wins over Accept.',
} as const;

/** A list operation's parameters and cross-parameter rules. */
export interface QuerySpec<S extends Record<string, ParamSpec>> {
  params: S;
  options: QueryOptions;
}

export const querySpec = <const S extends Record<string, ParamSpec>>(
  params: S,
  options: QueryOptions = {},
): QuerySpec<S> => ({ params, options });

type In<P> = P extends { kind: 'list'; item: infer I } ? ItemOut<I> | readonly ItemOut<I>[] : Out<P>;

/**
 * What a client may send for a list query: every parameter optional, a list as one item or an array of them. The
 * typed client (src/client/) takes its parameters in this shape, so they follow the table the server parses.
 */
export type QueryInput<S extends Record<string, ParamSpec>> = { [K in keyof S]?: In<S[K]> };
