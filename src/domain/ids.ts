// What an id of the inventory may be (tenant, asset, finding, risk, exemption… ids).
import { LONG_KEY_BYTES, utf8Bytes } from './limits.js';

/** The longest id, in UTF-8 bytes (some kinds have a lower limit: src/domain/limits.ts). */
export const MAX_ID_LENGTH = LONG_KEY_BYTES;

// Ids must be listable in a comma-separated filter and distinguishable in a (percent-encoded) path.
// eslint-disable-next-line no-control-regex
export const FORBIDDEN_IN_ID = /[,%\s\u0000-\u001f\u007f]/;

/** Why a text cannot be an id, or null when it can. `maxBytes`: the limit of its kind, in UTF-8 bytes. */
export function idProblem(value: string, maxBytes: number = MAX_ID_LENGTH): string | null {
  if (value.length < 1 || (value.length * 3 > maxBytes && utf8Bytes(value) > maxBytes))
    return `must be 1 to ${maxBytes} bytes long in UTF-8${value.length < 1 ? '' : `, not ${utf8Bytes(value)}`}`;
  if (FORBIDDEN_IN_ID.test(value)) return 'must not contain commas, %, whitespace or control characters';
  return null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** A UUID as the API's contract names one: 8-4-4-4-12 hexadecimal digits, any letter case. */
export const isUuid = (value: string): boolean => UUID.test(value);
