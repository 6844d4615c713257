// The console's shell: the sign-in form until a key is accepted, then the navigation, the page the address names,
// and sign-out. The address is kept through sign-in, so a shared link opens its view once the key is given.
import { useMemo, useState } from 'preact/hooks';
import type { SecinvApiError } from '../../src/client/index.js';
import { AssetPage } from './asset.js';
import { Assets } from './assets.js';
import { SessionProvider, type SessionContext } from './data.js';
import { ErrorNotice } from './errors.js';
import { Overview } from './overview.js';
import { Risks } from './risks.js';
import { href, Link, usePlace, type Place } from './router.js';
import { Scans } from './scans.js';
import { cleanKey, signIn, signOut, storedSession, type Session } from './session.js';
import { Vulnerabilities } from './vulnerabilities.js';

function SignIn(props: { onSignedIn: (session: Session) => void; reason: unknown }) {
  const [key, setKey] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(props.reason);
  return (
    <main id="main" class="signin">
      <h1>secinv console</h1>
      <p>
        Read the tenant inventory of this server: its risks, assets and vulnerability findings, and the scans that fed
        it. Paste a tenant API key (from <code>secinv keys create</code> or <code>secinv demo</code>). The key stays in
        this browser tab only.
      </p>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          // User Timing marks (DevTools' timeline, bench/console.ts): sign-in to the overview drawn.
          performance.clearMarks();
          performance.mark('secinv:sign-in');
          setBusy(true);
          setError(undefined);
          signIn(cleanKey(key))
            .then(props.onSignedIn, setError)
            .finally(() => setBusy(false));
        }}
      >
        <div class="field">
          <label for="api-key">Tenant API key</label>
          <input
            id="api-key"
            name="api-key"
            type="password"
            autoComplete="off"
            spellcheck={false}
            required
            value={key}
            onInput={(event) => setKey(event.currentTarget.value)}
          />
        </div>
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      {error !== undefined && <ErrorNotice error={error} />}
    </main>
  );
}

function Page(props: { place: Place }) {
  const { place } = props;
  const [first, ...rest] = place.path.split('/');
  switch (first) {
    case '':
      return <Overview />;
    case 'risks':
      return <Risks place={place} />;
    case 'assets':
      if (rest.length > 0) {
        const id = decodeURIComponent(rest.join('/'));
        // A new asset is a new page: its state (open sections, loads) starts afresh.
        return <AssetPage key={id} place={place} id={id} />;
      }
      return <Assets place={place} />;
    case 'vulnerabilities':
      return <Vulnerabilities place={place} />;
    case 'scans':
      return <Scans place={place} />;
    default:
      return (
        <p role="alert">
          No such page. <Link to={href('')}>Go to the overview</Link>.
        </p>
      );
  }
}

const NAV = [
  ['', 'Overview'],
  ['risks', 'Risks'],
  ['assets', 'Assets'],
  ['vulnerabilities', 'Vulnerabilities'],
  ['scans', 'Scans'],
] as const;

export function App() {
  const place = usePlace();
  const [session, setSession] = useState<Session | undefined>(storedSession);
  const [reason, setReason] = useState<unknown>();
  const context = useMemo<SessionContext | undefined>(
    () =>
      session && {
        ...session,
        expire: (error: SecinvApiError) => {
          signOut();
          setReason(error);
          setSession(undefined);
        },
      },
    [session],
  );
  if (!context) {
    return (
      <SignIn
        reason={reason}
        onSignedIn={(s) => {
          setReason(undefined);
          setSession(s);
        }}
      />
    );
  }
  const section = place.path.split('/')[0] ?? '';
  return (
    <SessionProvider value={context}>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <span class="brand">secinv console</span>
        <nav aria-label="Pages">
          <ul>
            {NAV.map(([path, label]) => (
              <li key={path}>
                <Link to={href(path)} aria-current={section === path ? 'page' : undefined}>
                  {label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <span class="tenant muted">{context.tenantId ? `Tenant ${context.tenantId}` : ''}</span>
        <button
          type="button"
          onClick={() => {
            signOut();
            setSession(undefined);
          }}
        >
          Sign out
        </button>
      </header>
      <main id="main">
        <Page place={place} />
      </main>
    </SessionProvider>
  );
}
