// Loading from the API in a page: the session's client through a context, a hook that loads, reloads when its inputs
// change and ignores answers that arrive after newer ones, and the one place a refused key ends the session.
import { createContext, type ComponentChildren } from 'preact';
import { useCallback, useContext, useEffect, useRef, useState } from 'preact/hooks';
import { SecinvApiError, type Client } from '../../src/client/index.js';
import type { Session } from './session.js';

export interface SessionContext extends Session {
  /** The server refused the key mid-session (revoked, expired): back to sign-in, saying why. */
  expire(error: SecinvApiError): void;
}

const Context = createContext<SessionContext | undefined>(undefined);

export function SessionProvider(props: { value: SessionContext; children: ComponentChildren }) {
  return <Context.Provider value={props.value}>{props.children}</Context.Provider>;
}

export function useSession(): SessionContext {
  const session = useContext(Context);
  if (session === undefined) throw new Error('useSession outside a signed-in page');
  return session;
}

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  retry: () => void;
}

/** Loads `load(client)` now and whenever `key` changes; the last request's answer wins. */
export function useApi<T>(load: (client: Client) => Promise<T>, key: string): Loaded<T> {
  const session = useSession();
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: true });
  const [attempt, setAttempt] = useState(0);
  const latest = useRef(0);
  useEffect(() => {
    const id = ++latest.current;
    setState((previous) => ({ data: previous.data, loading: true }));
    load(session.client).then(
      (data) => {
        if (id === latest.current) setState({ data, loading: false });
      },
      (error: unknown) => {
        if (id !== latest.current) return;
        if (error instanceof SecinvApiError && error.status === 401) session.expire(error);
        else setState({ error, loading: false });
      },
    );
    // `load` is a new closure on every render; `key` names what it loads.
  }, [key, attempt, session]);
  const retry = useCallback(() => setAttempt((n) => n + 1), []);
  return { data: state.data, error: state.error, loading: state.loading, retry };
}
