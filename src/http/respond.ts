import type { FastifyReply } from 'fastify';
import { spliced } from '../lib/collections.js';

export const JSON_TYPE = 'application/json; charset=utf-8';

const LIST_HEAD = Buffer.from('{"data":[');

/** A list body assembled from the stored JSON of each item: no parse, no re-serialisation, one Buffer to send. */
export const listBody = (items: readonly Buffer[], meta: object): Buffer =>
  spliced(LIST_HEAD, items, `],"meta":${JSON.stringify(meta)}}`);

export const itemBody = (item: Buffer): Buffer => Buffer.concat([Buffer.from('{"data":'), item, Buffer.from('}')]);

export const sendJson = (reply: FastifyReply, body: Buffer): FastifyReply => reply.type(JSON_TYPE).send(body);

export const pageMeta = (page: number, perPage: number, total: number) => ({
  page,
  perPage,
  total,
  hasNextPage: page * perPage < total,
  hasPreviousPage: page > 1,
});
