// Schema building blocks shared by the resource schemas. The resource schemas are the single description of each
// record: they document responses (OpenAPI) and drive the import normaliser (src/input/normalize.ts), which reads
// these JSON Schema keywords: type, properties, items, enum, format, anyOf with null.
import { Type, type TSchema, type TUnsafe } from 'typebox';

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** Output format `yyyy-MM-ddTHH:mm:ss.SSSZ`; imported in any RFC 3339 offset and normalised. */
export const Timestamp = (description?: string) =>
  Type.String({ format: 'date-time', ...(description ? { description } : {}) });

/** A calendar date `yyyy-MM-dd`, kept as a date. */
export const CalendarDate = () => Type.String({ format: 'date' });

export const StringEnum = <const V extends readonly string[]>(values: V, description?: string): TUnsafe<V[number]> =>
  Type.Unsafe<V[number]>({ type: 'string', enum: [...values], ...(description ? { description } : {}) });

/** An object whose contents the contract does not show: any JSON object, stored and returned as given. */
export const FreeObject = (description?: string) =>
  Type.Object({}, { additionalProperties: true, ...(description ? { description } : {}) });

/** A UUID: 8-4-4-4-12 hexadecimal digits (api.md: "Identifiers named as UUID are strings in UUID format"). */
export const Uuid = (description?: string) => Type.String({ format: 'uuid', ...(description ? { description } : {}) });
export const NullableUuid = (description?: string) => Nullable(Uuid(description));

export const NullableString = (description?: string) => Nullable(Type.String(description ? { description } : {}));
export const NullableNumber = (description?: string) => Nullable(Type.Number(description ? { description } : {}));
export const NullableInteger = (description?: string) => Nullable(Type.Integer(description ? { description } : {}));
export const NullableTimestamp = (description?: string) => Nullable(Timestamp(description));
export const Bool = (description?: string) => Type.Boolean(description ? { description } : {});

export const KeyValueTag = Type.Object({ Key: NullableString(), Value: NullableString() });
