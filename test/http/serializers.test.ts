// Response serialisers are compiled on first use (src/http/serializers.ts): the server's start compiles none, and a
// route that does answer with an object is serialised by its schema exactly as Fastify's own compiler would.
import SerializerSelector from '@fastify/fast-json-stringify-compiler';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { lazySerializers } from '../../src/http/serializers.js';

const route = (schema: unknown) => ({ method: 'GET', url: '/x', httpStatus: '200', schema });
const schema = {
  type: 'object',
  properties: { name: { type: 'string' }, count: { type: 'integer' } },
};

describe('lazySerializers', () => {
  it('compiles a schema only when its serialiser is first called', () => {
    // fast-json-stringify refuses this schema when it compiles it.
    const broken = route({ type: 'object', properties: { a: { $ref: '#/definitions/missing' } } });
    expect(() => SerializerSelector()(undefined, {})(broken)).toThrow();
    const serialize = lazySerializers(undefined, {})(broken);
    expect(() => serialize({ a: 1 })).toThrow();
  });

  it('serialises as the schema says, as Fastify would', () => {
    const eager = SerializerSelector()(undefined, {})(route(schema));
    const lazy = lazySerializers(undefined, {})(route(schema));
    const doc = { name: 'n', count: 3, extra: 'dropped' };
    expect(lazy(doc)).toBe(eager(doc));
    expect(JSON.parse(lazy(doc))).toEqual({ name: 'n', count: 3 });
    // A second call reuses the compiled serialiser and still answers the same.
    expect(lazy({ name: 'm', count: 4 })).toBe('{"name":"m","count":4}');
  });

  it('serialises an object reply of a Fastify route by its response schema', async () => {
    const app = Fastify({ schemaController: { compilersFactory: { buildSerializer: lazySerializers } } });
    app.get('/x', { schema: { response: { 200: schema } } }, async () => ({ name: 'n', count: 3, extra: true }));
    const response = await app.inject({ method: 'GET', url: '/x' });
    expect(response.body).toBe('{"name":"n","count":3}');
    await app.close();
  });
});
