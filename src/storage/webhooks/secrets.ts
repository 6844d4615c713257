// The webhooks' signing secrets sealed at rest (docs/DESIGN.md §104): AES-256-GCM under the database's webhook key
// (a row of `server_secrets`, made by migration 0021), bound to the endpoint's id, so that a copy of the `webhooks`
// table alone (a dump of it, a backup, a query log of its rows) yields no secret, and a sealed secret moved to another
// endpoint's row does not open.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.js';

const VERSION = 'v1';

/** The database's webhook key, read once per storage. */
export function webhookKey(db: Kysely<Database>): () => Promise<Buffer> {
  let key: Promise<Buffer> | undefined;
  return () =>
    (key ??= db
      .selectFrom('server_secrets')
      .select('value')
      .where('name', '=', 'webhook_key')
      .executeTakeFirstOrThrow()
      .then((row) => Buffer.from(row.value, 'hex'))
      .catch((error: unknown) => {
        key = undefined;
        throw error;
      }));
}

export function sealSecret(key: Buffer, endpointId: string, secret: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(endpointId));
  const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return `${VERSION}.${Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64')}`;
}

export function openSecret(key: Buffer, endpointId: string, sealed: string): string {
  const [version, data] = sealed.split('.');
  if (version !== VERSION || data === undefined) throw new Error(`webhook ${endpointId}: unknown secret format`);
  const bytes = Buffer.from(data, 'base64');
  const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, 12));
  decipher.setAAD(Buffer.from(endpointId));
  decipher.setAuthTag(bytes.subarray(12, 28));
  return Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString('utf8');
}
