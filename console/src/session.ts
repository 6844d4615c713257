// The signed-in key and the API client made with it. The key lives in sessionStorage: it survives a reload of the tab
// but not the tab, is never written into a URL, and sign-out removes it.
import { createClient, SecinvConnectionError, type Client } from '../../src/client/index.js';
import { apiErrorOf, buildUrl } from '../../src/client/transport.js';

const KEY_ITEM = 'secinv.console.key';
const TENANT_ITEM = 'secinv.console.tenant';

export interface Session {
  client: Client;
  /** The tenant the key reads, when the inventory had an asset to tell it. */
  tenantId: string | undefined;
}

/** Each request once more on a 429 or 503 at most: a person is waiting, and the error says when to retry. */
const clientFor = (apiKey: string): Client => createClient({ baseUrl: location.origin, apiKey, retries: 1 });

export function storedSession(): Session | undefined {
  const key = sessionStorage.getItem(KEY_ITEM);
  if (key === null) return undefined;
  return { client: clientFor(key), tenantId: sessionStorage.getItem(TENANT_ITEM) ?? undefined };
}

/**
 * Tries the key with the cheapest tenant request (one asset); throws what the server said (401 for a refused key) or
 * that it could not be reached. Keeps the key only once the server has accepted it.
 */
export async function signIn(key: string): Promise<Session> {
  const client = clientFor(key);
  const { data } = await client.assets.list({ perPage: 1 });
  const tenantId = data[0]?.tenantId;
  sessionStorage.setItem(KEY_ITEM, key);
  if (tenantId === undefined) sessionStorage.removeItem(TENANT_ITEM);
  else sessionStorage.setItem(TENANT_ITEM, tenantId);
  return { client, tenantId };
}

export function signOut(): void {
  sessionStorage.removeItem(KEY_ITEM);
  sessionStorage.removeItem(TENANT_ITEM);
}

/** A key from the sign-in field: what follows `Bearer ` when a whole header was pasted, without spaces. */
export const cleanKey = (text: string): string => text.trim().replace(/^(?:authorization:\s*)?bearer\s+/i, '');

/**
 * Downloads a whole filtered list as a file (the export of the list: every page, one request). The answer is read
 * into a Blob, then saved through a link, because a plain link could not carry the key in its header.
 */
export async function downloadExport(path: string, query: Record<string, string>, format: 'csv' | 'ndjson') {
  const key = sessionStorage.getItem(KEY_ITEM) ?? '';
  const url = buildUrl(location.origin, path, { ...query, format });
  let response: Response;
  try {
    response = await fetch(url, { headers: { authorization: `Bearer ${key}` } });
  } catch (error) {
    throw new SecinvConnectionError(`cannot reach ${url}`, url, false, error);
  }
  if (!response.ok) throw await apiErrorOf(response);
  const blob = await response.blob();
  const name =
    /filename="([^"]+)"/.exec(response.headers.get('content-disposition') ?? '')?.[1] ??
    `${path.split('/').pop() ?? 'export'}.${format}`;
  const link = document.createElement('a');
  link.href = URL.createObjectURL(blob);
  link.download = name;
  link.click();
  setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
}
