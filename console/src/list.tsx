// Pieces every list page shares: the export buttons, the pager of numbered pages, the cursor batches of the risk and
// scan lists, and the title of a page.
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { SecinvApiError } from '../../src/client/index.js';
import { useSession } from './data.js';
import { ErrorNotice } from './errors.js';
import { count } from './format.js';
import { href, Link, movedInPage } from './router.js';
import { downloadExport } from './session.js';

/** CSV and NDJSON downloads of the whole filtered list. */
export function ExportButtons(props: { apiPath: string; query: Record<string, string>; what: string }) {
  const session = useSession();
  const [busy, setBusy] = useState<string | undefined>();
  const [error, setError] = useState<unknown>();
  const run = (format: 'csv' | 'ndjson') => {
    setBusy(format);
    setError(undefined);
    downloadExport(props.apiPath, props.query, format)
      .catch((e: unknown) => {
        if (e instanceof SecinvApiError && e.status === 401) session.expire(e);
        else setError(e);
      })
      .finally(() => setBusy(undefined));
  };
  return (
    <div class="exports" role="group" aria-label={`Export ${props.what}`}>
      <span class="muted">Export all matching {props.what}:</span>
      <button type="button" onClick={() => run('csv')} disabled={busy !== undefined}>
        {busy === 'csv' ? 'Exporting…' : 'CSV'}
      </button>
      <button type="button" onClick={() => run('ndjson')} disabled={busy !== undefined}>
        {busy === 'ndjson' ? 'Exporting…' : 'NDJSON'}
      </button>
      {error !== undefined && <ErrorNotice error={error} />}
    </div>
  );
}

/** Previous / next links of a numbered list; the page lives in the query string like the filters. */
export function Pager(props: {
  path: string;
  params: URLSearchParams;
  meta: { page: number; perPage: number; total: number; hasNextPage: boolean; hasPreviousPage: boolean };
  what: string;
  /** Where it stands, when a page has two (the landmarks must differ). */
  position?: string;
}) {
  const { meta } = props;
  const first = meta.total === 0 ? 0 : (meta.page - 1) * meta.perPage + 1;
  const last = Math.min(meta.page * meta.perPage, meta.total);
  const pages = Math.max(1, Math.ceil(meta.total / meta.perPage));
  const to = (page: number) => {
    const next = new URLSearchParams(props.params);
    next.set('page', String(page));
    return href(props.path, next);
  };
  return (
    <nav class="pager" aria-label={`Pages of ${props.what}${props.position ? `, ${props.position}` : ''}`}>
      <p aria-live="polite">
        {count(first)}–{count(last)} of <strong data-total={meta.total}>{count(meta.total)}</strong> {props.what}
        {' · '}page {count(meta.page)} of {count(pages)}
      </p>
      {meta.hasPreviousPage ? <Link to={to(meta.page - 1)}>← Previous page</Link> : null}
      {meta.hasNextPage ? <Link to={to(meta.page + 1)}>Next page →</Link> : null}
    </nav>
  );
}

/**
 * The cursor of each batch shown so far (the first has none), for the filters in `search`. Cursors stay in the page,
 * not the address: a cursor is bound to the key that made it, so a shared address starts from the first batch. New
 * filters start from the first batch at once, never sending an older filter's cursor with them.
 */
export function useCursors(search: string) {
  const [state, setState] = useState<{ search: string; cursors: (string | undefined)[] }>({
    search,
    cursors: [undefined],
  });
  const cursors = state.search === search ? state.cursors : [undefined];
  return {
    cursor: cursors[cursors.length - 1],
    /** How many batches come before this one. */
    before: cursors.length - 1,
    next: (cursor: string) => setState({ search, cursors: [...cursors, cursor] }),
    previous: () => setState({ search, cursors: cursors.slice(0, -1) }),
  };
}

/** Previous / next batch of a cursor list. */
export function BatchPager(props: { batches: ReturnType<typeof useCursors>; next: string | null; what: string }) {
  const { batches, next } = props;
  return (
    <nav class="pager" aria-label={`Batches of ${props.what}`}>
      {batches.before > 0 && (
        <button type="button" onClick={batches.previous}>
          ← Previous batch
        </button>
      )}
      {next && (
        <button type="button" onClick={() => batches.next(next)}>
          Next batch →
        </button>
      )}
    </nav>
  );
}

/** The page's heading, focused when the page changes (a screen reader announces where the user landed). */
export function PageTitle(props: { children: ComponentChildren; title: string }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${props.title} · secinv console`;
    // Only after a navigation inside the console: the first page keeps the browser's own focus.
    if (movedInPage()) heading.current?.focus();
  }, [props.title]);
  return (
    <h1 tabIndex={-1} ref={heading}>
      {props.children}
    </h1>
  );
}
