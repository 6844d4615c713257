// The console's location: the page is the path under /console/, the filters are the query string (so that a view can
// be bookmarked, shared and reloaded). Navigation is history.pushState; links stay real links (open in a new tab).
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';

export const BASE = '/console/';

export interface Place {
  /** The path under /console/, e.g. `risks` or `assets/<encoded id>`; '' for the overview. */
  path: string;
  params: URLSearchParams;
}

const here = (): Place => ({
  path: location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) : '',
  params: new URLSearchParams(location.search),
});

/** The address of a page with these parameters (empty ones left out). */
export function href(path: string, params?: URLSearchParams | Record<string, string>): string {
  const query = new URLSearchParams(params);
  for (const [name, value] of [...query]) if (value === '') query.delete(name);
  const search = query.toString();
  return `${BASE}${path}${search === '' ? '' : `?${search}`}`;
}

let moved = false;
/** Whether the user has moved between pages in this document (then a new page takes the focus to its heading). */
export const movedInPage = (): boolean => moved;

export function navigate(to: string, options: { replace?: boolean } = {}): void {
  moved = true;
  if (options.replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  dispatchEvent(new PopStateEvent('popstate'));
}

export function usePlace(): Place {
  const [place, setPlace] = useState(here);
  useEffect(() => {
    const update = () => {
      moved = true;
      setPlace(here());
    };
    addEventListener('popstate', update);
    return () => removeEventListener('popstate', update);
  }, []);
  return place;
}

/** A link handled in the page (a plain click) or by the browser (a new tab, a download, a modified click). */
export function Link(props: {
  to: string;
  children: ComponentChildren;
  class?: string;
  'aria-label'?: string;
  'aria-current'?: 'page' | undefined;
}) {
  const { to, children, ...rest } = props;
  return (
    <a
      {...rest}
      href={to}
      onClick={(event) => {
        if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
        event.preventDefault();
        navigate(to);
      }}
    >
      {children}
    </a>
  );
}

/** The page of one asset (ids hold `/` and `:`, so the id is one encoded path segment). */
export const assetHref = (id: string): string => href(`assets/${encodeURIComponent(id)}`);
