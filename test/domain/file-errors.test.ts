// Why a file could not be read, in words (src/domain/errors.ts fileErrorReason), from real errors of node:fs.
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fileErrorReason } from '../../src/domain/errors.js';

const failure = (read: () => unknown): unknown => {
  try {
    read();
  } catch (error) {
    return error;
  }
  throw new Error('the read did not fail');
};

describe('fileErrorReason', () => {
  it('names the common errno codes in words, with the code', () => {
    expect(fileErrorReason(failure(() => readFileSync(join(tmpdir(), 'secinv-no-such-file'))))).toBe(
      'no such file (ENOENT)',
    );
    expect(fileErrorReason(failure(() => readFileSync(tmpdir())))).toBe('it is a folder, not a file (EISDIR)');
    expect(fileErrorReason(failure(() => readFileSync('/etc/hostname/x')))).toBe(
      'a part of the path is not a folder (ENOTDIR)',
    );
  });

  it('gives another code as it is, and an error without a code by its message', () => {
    expect(fileErrorReason(Object.assign(new Error('x'), { code: 'EXDEV' }))).toBe('EXDEV');
    expect(fileErrorReason(new Error('the disk went away'))).toBe('the disk went away');
    expect(fileErrorReason('plain')).toBe('plain');
  });
});
