// What an id of the inventory may be (tenant, asset, finding, risk, exemption… ids).

/** The longest id. */
export const MAX_ID_LENGTH = 1024;

// Ids must be listable in a comma-separated filter and distinguishable in a (percent-encoded) path.
// eslint-disable-next-line no-control-regex
export const FORBIDDEN_IN_ID = /[,%\s\u0000-\u001f\u007f]/;

/** Why a text cannot be an id, or null when it can. */
export function idProblem(value: string): string | null {
  if (value.length < 1 || value.length > MAX_ID_LENGTH) return `must be 1 to ${MAX_ID_LENGTH} characters`;
  if (FORBIDDEN_IN_ID.test(value)) return 'must not contain commas, %, whitespace or control characters';
  return null;
}
