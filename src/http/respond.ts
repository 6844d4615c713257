import type { FastifyReply } from 'fastify';

export const JSON_TYPE = 'application/json; charset=utf-8';

const COMMA = Buffer.from(',');
const LIST_HEAD = Buffer.from('{"data":[');

/** A list body assembled from the stored JSON of each item: no parse, no re-serialisation, one Buffer to send. */
export function listBody(items: readonly Buffer[], meta: object): Buffer {
  const parts: Buffer[] = [LIST_HEAD];
  items.forEach((item, i) => {
    if (i > 0) parts.push(COMMA);
    parts.push(item);
  });
  parts.push(Buffer.from(`],"meta":${JSON.stringify(meta)}}`));
  return Buffer.concat(parts);
}

export const itemBody = (item: Buffer): Buffer => Buffer.concat([Buffer.from('{"data":'), item, Buffer.from('}')]);

export const sendJson = (reply: FastifyReply, body: Buffer): FastifyReply => reply.type(JSON_TYPE).send(body);

export const pageMeta = (page: number, perPage: number, total: number) => ({
  page,
  perPage,
  total,
  hasNextPage: page * perPage < total,
  hasPreviousPage: page > 1,
});
