// Response serialisers compiled when first used instead of when the server starts. The routes' response schemas
// document the API (src/http/docs.ts): handlers send pre-built Buffers and error bodies pre-built strings, which
// Fastify sends without serialising, so a serialiser is compiled only if a handler ever answers with an object.
// Compiling them all (fast-json-stringify, one per route and status) was 0.3-0.45 s of every start (docs/DESIGN.md §79).
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';

type Factory = ReturnType<typeof SerializerSelector>;

/** Fastify's own serialiser factory (schemaController.compilersFactory.buildSerializer), each compiled on first use. */
export const lazySerializers: Factory = (externalSchemas, options) => {
  const compile = SerializerSelector()(externalSchemas, options);
  return (route) => {
    let serialize: ((doc: unknown) => string) | undefined;
    return (doc) => (serialize ??= compile(route))(doc);
  };
};
