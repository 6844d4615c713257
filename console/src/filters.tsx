// One filter form for every list, described by a table of fields. The parameters are the API's own names and
// values, so the console's query string is the API query (a view's address reads like the request behind it); the
// form checks nothing the server checks: a wrong value comes back as the server's 400, listing every problem.
import { useEffect, useState } from 'preact/hooks';
import { href, navigate } from './router.js';

export type FilterField =
  /** Several of a closed list, joined by commas (checkboxes). */
  | { kind: 'multi'; name: string; label: string; options: readonly string[] }
  /** Free text; for lists, comma-separated as the API takes them. */
  | { kind: 'text'; name: string; label: string; hint?: string }
  /** `true`, `false` or not filtered. */
  | { kind: 'bool'; name: string; label: string }
  | { kind: 'date'; name: string; label: string }
  | { kind: 'number'; name: string; label: string; hint?: string };

/** A comma-separated list of free values (ids, regions…). */
export const listFilter = (name: string, label: string, hint = 'comma-separated'): FilterField => ({
  kind: 'text',
  name,
  label,
  hint,
});
export const boolFilter = (name: string, label: string): FilterField => ({ kind: 'bool', name, label });

export interface SortSpec {
  /** Values of `sortBy`, with their labels. */
  by: readonly (readonly [string, string])[];
  /** The two values of `sortOrder` as the list spells them (`asc`/`desc` or `ASC`/`DESC`). */
  orders: readonly [string, string];
}

export interface FilterSpec {
  /** The page the form belongs to (`risks`, `assets`, `vulnerabilities`, `scans`). */
  path: string;
  /** Shown at once. */
  main: readonly FilterField[];
  /** Behind "More filters" (open when one of them is set); none, no "More filters". */
  more: readonly FilterField[];
  /** None for a list that has one order (the scans, newest first). */
  sort?: SortSpec;
  /** Page sizes offered; the first is the console's default. */
  perPage: readonly [number, ...number[]];
}

const idOf = (path: string, name: string) => `f-${path}-${name}`;

function Field(props: {
  field: FilterField;
  path: string;
  values: URLSearchParams;
  set: (name: string, v: string) => void;
}) {
  const { field, path, values, set } = props;
  const id = idOf(path, field.name);
  const value = values.get(field.name) ?? '';
  switch (field.kind) {
    case 'multi': {
      const chosen = new Set(value === '' ? [] : value.split(','));
      return (
        <fieldset class="field multi">
          <legend>{field.label}</legend>
          {field.options.map((option) => (
            <label key={option}>
              <input
                type="checkbox"
                name={field.name}
                value={option}
                checked={chosen.has(option)}
                onChange={(event) => {
                  if (event.currentTarget.checked) chosen.add(option);
                  else chosen.delete(option);
                  set(field.name, field.options.filter((o) => chosen.has(o)).join(','));
                }}
              />
              {option}
            </label>
          ))}
        </fieldset>
      );
    }
    case 'bool':
      return (
        <div class="field">
          <label for={id}>{field.label}</label>
          <select id={id} value={value} onChange={(event) => set(field.name, event.currentTarget.value)}>
            <option value="">any</option>
            <option value="true">yes</option>
            <option value="false">no</option>
          </select>
        </div>
      );
    default: {
      const hintId = 'hint' in field && field.hint !== undefined ? `${id}-hint` : undefined;
      return (
        <div class="field">
          <label for={id}>{field.label}</label>
          {field.kind === 'date' ? (
            <input id={id} type="date" value={value} onInput={(event) => set(field.name, event.currentTarget.value)} />
          ) : (
            <input
              id={id}
              type="text"
              inputMode={field.kind === 'number' ? 'decimal' : undefined}
              value={value}
              aria-describedby={hintId}
              onInput={(event) => set(field.name, event.currentTarget.value)}
            />
          )}
          {hintId !== undefined && (
            <small id={hintId} class="muted">
              {'hint' in field ? field.hint : ''}
            </small>
          )}
        </div>
      );
    }
  }
}

/** The sort of a list that has several, by the API's `sortBy` and `sortOrder`. */
function SortFields(props: {
  sort: SortSpec;
  path: string;
  values: URLSearchParams;
  set: (name: string, v: string) => void;
}) {
  const { sort, path, values, set } = props;
  const [orderAsc, orderDesc] = sort.orders;
  return (
    <>
      <div class="field">
        <label for={idOf(path, 'sortBy')}>Sort by</label>
        <select
          id={idOf(path, 'sortBy')}
          value={values.get('sortBy') ?? ''}
          onChange={(event) => set('sortBy', event.currentTarget.value)}
        >
          <option value="">default</option>
          {sort.by.map(([value, label]) => (
            <option key={value} value={value}>
              {label}
            </option>
          ))}
        </select>
      </div>
      <div class="field">
        <label for={idOf(path, 'sortOrder')}>Order</label>
        <select
          id={idOf(path, 'sortOrder')}
          value={values.get('sortOrder') ?? ''}
          onChange={(event) => set('sortOrder', event.currentTarget.value)}
        >
          <option value="">default</option>
          <option value={orderAsc}>ascending</option>
          <option value={orderDesc}>descending</option>
        </select>
      </div>
    </>
  );
}

/** The filters and sort of a list, from and to the page's query string; applied on submit. */
export function FilterForm(props: { spec: FilterSpec; params: URLSearchParams }) {
  const { spec } = props;
  const [values, setValues] = useState(() => new URLSearchParams(props.params));
  // Back, forward and links change the query string under the form: it shows what the list shows.
  const search = props.params.toString();
  useEffect(() => setValues(new URLSearchParams(search)), [search]);
  const set = (name: string, value: string) =>
    setValues((previous) => {
      const next = new URLSearchParams(previous);
      if (value === '') next.delete(name);
      else next.set(name, value);
      return next;
    });
  const moreSet = spec.more.some((f) => values.has(f.name));
  return (
    <form
      class="filters"
      aria-label="Filters"
      onSubmit={(event) => {
        event.preventDefault();
        // A new filter starts from the first page.
        const next = new URLSearchParams(values);
        next.delete('page');
        navigate(href(spec.path, next));
      }}
    >
      <div class="field-grid">
        {spec.main.map((field) => (
          <Field key={field.name} field={field} path={spec.path} values={values} set={set} />
        ))}
      </div>
      {spec.more.length > 0 && (
        <details open={moreSet}>
          <summary>More filters</summary>
          <div class="field-grid">
            {spec.more.map((field) => (
              <Field key={field.name} field={field} path={spec.path} values={values} set={set} />
            ))}
          </div>
        </details>
      )}
      <div class="form-row">
        {spec.sort && <SortFields sort={spec.sort} path={spec.path} values={values} set={set} />}
        <div class="field">
          <label for={idOf(spec.path, 'perPage')}>Per page</label>
          <select
            id={idOf(spec.path, 'perPage')}
            value={values.get('perPage') ?? String(spec.perPage[0])}
            onChange={(event) => set('perPage', event.currentTarget.value)}
          >
            {spec.perPage.map((n) => (
              <option key={n} value={String(n)}>
                {n}
              </option>
            ))}
          </select>
        </div>
        <div class="actions">
          <button type="submit" class="primary">
            Apply filters
          </button>
          <button type="button" onClick={() => navigate(href(spec.path))}>
            Clear
          </button>
        </div>
      </div>
    </form>
  );
}

/** The list query of a page: its query string without the console's own paging parameters. */
export function listQuery(params: URLSearchParams, drop: readonly string[] = []): Record<string, string> {
  const query: Record<string, string> = {};
  for (const [name, value] of params) if (!drop.includes(name) && value !== '') query[name] = value;
  return query;
}
