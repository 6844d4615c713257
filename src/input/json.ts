// Reading fields of parsed report JSON without trusting their types: a value of the wrong type counts as absent.
import { lengthProblem } from '../domain/limits.js';
import { normalizeTimestamp } from '../domain/time.js';

export type Json = Record<string, unknown>;

export const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
/** A non-empty string, else null. */
export const text = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
/** The non-empty strings of an array. */
export const texts = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string' && x !== '') : [];
/** A timestamp field as UTC milliseconds text; null when absent, empty or not a timestamp. */
export const timestamp = (v: unknown): string | null => {
  const t = text(v);
  return t === null ? null : normalizeTimestamp(t);
};
/** The objects of an array. */
export const objects = (v: unknown): Json[] => (Array.isArray(v) ? v.filter(isObject) : []);

/**
 * Reports an indexed text over its limit in UTF-8 bytes (src/domain/limits.ts) at its path; true when it is over.
 * `stored`: the form the database indexes, when it differs (an upper-cased alias).
 */
export function overLimit(
  value: string,
  maxBytes: number,
  path: string,
  problems: { path: string; message: string }[],
  stored?: string,
): boolean {
  const problem = lengthProblem(value, maxBytes, stored);
  if (problem !== null) problems.push({ path, message: problem });
  return problem !== null;
}
