// CVSS v3.x exploitability from vectors, with the reference values of docs/INGEST.md.
import { describe, expect, it } from 'vitest';
import { cvss3Exploitability, isExploitableByVectors } from '../../src/domain/cvss.js';

describe('cvss3Exploitability', () => {
  it.each([
    ['CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H', 3.887],
    ['CVSS:3.1/AV:N/AC:L/PR:N/UI:R/S:U/C:L/I:L/A:N', 2.835],
    ['CVSS:3.0/AV:L/AC:L/PR:L/UI:N/S:U/C:H/I:N/A:N', 1.835],
    ['CVSS:3.1/AV:L/AC:H/PR:L/UI:N/S:U/C:H/I:H/A:H', 1.048],
    ['CVSS:3.1/AV:P/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H', 0.915],
    ['CVSS:3.1/AV:N/AC:H/PR:H/UI:R/S:C/C:L/I:L/A:N', 0.953],
    ['CVSS:3.1/AV:L/AC:H/PR:H/UI:R/S:U/C:L/I:N/A:N', 0.333],
    ['CVSS:3.1/AV:L/AC:L/PR:H/UI:N/S:C/C:H/I:H/A:H', 1.4795],
    // No prefix, and environmental metrics after the base ones.
    ['AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H', 3.887],
    ['CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H/CR:X/IR:H', 3.887],
  ])('%s is %f', (vector, expected) => {
    expect(cvss3Exploitability(vector)).toBeCloseTo(expected, 3);
  });

  it('is null for v2 and v4 vectors, and for a missing or unknown base metric', () => {
    for (const vector of [
      'AV:N/AC:L/Au:N/C:P/I:P/A:P',
      'CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:H/SC:N/SI:N/SA:N',
      'CVSS:2.0/AV:N/AC:L/Au:N/C:P/I:P/A:P',
      'CVSS:3.1/AV:N/AC:L/PR:N/S:U/C:H/I:H/A:H',
      'CVSS:3.1/AV:X/AC:L/PR:N/UI:N/S:U',
      'CVSS:3.1/AV:N/AC:L/PR:N/UI:N',
      'CVSS:3.1/AV:N:x/AC:L/PR:N/UI:N/S:U',
      '',
    ]) {
      expect(cvss3Exploitability(vector), vector).toBeNull();
    }
  });
});

describe('isExploitableByVectors', () => {
  it('takes the largest exploitability of the v3 vectors, above 1.0', () => {
    // teamdojo CVE-2020-15999: nvd UI:R (2.835) and redhat UI:N (3.887).
    expect(
      isExploitableByVectors([
        'CVSS:3.1/AV:N/AC:L/PR:N/UI:R/S:U/C:H/I:H/A:H',
        'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H',
      ]),
    ).toBe(true);
    // 1.048 is above the threshold though a rounded score would show 1.0 or 1.1.
    expect(isExploitableByVectors(['CVSS:3.1/AV:L/AC:H/PR:L/UI:N/S:U/C:H/I:H/A:H'])).toBe(true);
    expect(isExploitableByVectors(['CVSS:3.1/AV:P/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H', 'AV:N/AC:L/Au:N/C:P/I:P/A:P'])).toBe(
      false,
    );
    expect(isExploitableByVectors([])).toBe(false);
  });
});
