// The one line a failed command prints, for main.ts and for a serving process that tells its primary why it failed.
import { UserError } from '../domain/errors.js';

/** What follows `secinv: `: a UserError's message, else the error's code and first line. */
export function failureLine(error: unknown): string {
  if (error instanceof UserError) return error.message;
  const err = error as NodeJS.ErrnoException;
  return `${err.code ? `${err.code}: ` : ''}${err.message.split('\n')[0]}`;
}
