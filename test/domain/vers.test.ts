// vers ranges (src/domain/vers.ts): the spec's constraint algorithm over the schemes secinv can order, and what it
// refuses or leaves undecided.
import { describe, expect, it } from 'vitest';
import { inVers, parseVers, type VersRange } from '../../src/domain/vers.js';

const range = (text: string): VersRange => {
  const parsed = parseVers(text);
  if (!('scheme' in parsed)) throw new Error(parsed.problem);
  return parsed;
};
const within = (text: string, versions: string[]) => versions.map((v) => inVers(v, range(text)));

describe('vers ranges', () => {
  it("CISA's generic ranges: bounds pair into intervals, exact versions stand alone", () => {
    expect(within('vers:generic/>=1.0|<=2.3', ['0.9', '1.0', '2.3', '2.3.0', '2.4'])).toEqual([
      false,
      true,
      true,
      true,
      false,
    ]);
    expect(within('vers:generic/>=2.9|<=4.1', ['2.8', '2.10', '4.1', '4.2'])).toEqual([false, true, true, false]);
    expect(within('vers:generic/2.5|4.2', ['2.5', '4.2', '3.0'])).toEqual([true, true, false]);
    // Several intervals, and an open end above.
    expect(within('vers:generic/<1.0|>=2.0|<3.0|>5', ['0.5', '1.5', '2.5', '4', '6'])).toEqual([
      true,
      false,
      true,
      false,
      true,
    ]);
    expect(within('vers:generic/!=2.0', ['2.0', '2.1'])).toEqual([false, true]);
    expect(within('vers:generic/*', ['7'])).toEqual([true]);
  });

  it('npm and semver: SemVer 2.0 precedence, pre-releases below their release', () => {
    expect(within('vers:npm/>=1.2.3|<2.0.0', ['1.2.3', '1.10.0', '2.0.0-rc.1', '2.0.0', '1.2.3-beta'])).toEqual([
      true,
      true,
      true,
      false,
      false,
    ]);
    expect(within('vers:semver/>1.0.0-alpha.1|<1.0.0', ['1.0.0-alpha.2', '1.0.0-alpha.beta', '1.0.0'])).toEqual([
      true,
      true,
      false,
    ]);
  });

  it('maven: release numbers, trailing zeros and the usual qualifiers', () => {
    expect(within('vers:maven/>=2.9.0|<2.9.5', ['2.9', '2.9.4', '2.9.10', '2.9.5-SNAPSHOT', '2.9.5'])).toEqual([
      true,
      true,
      false,
      true,
      false,
    ]);
    expect(within('vers:maven/>=1.0-alpha|<1.0', ['1.0-beta-2', '1.0-rc1', '1.0.0', '1.0-sp1'])).toEqual([
      true,
      true,
      false,
      false,
    ]);
  });

  it('a version the scheme cannot read is undecided, never in the range', () => {
    expect(inVers('2:1.2-3ubuntu1', range('vers:generic/>=1.0'))).toBeNull();
    expect(inVers('latest', range('vers:npm/>=1.0.0'))).toBeNull();
  });

  it('other schemes, and malformed ranges, are refused with the reason', () => {
    expect(parseVers('vers:deb/>=1.0')).toEqual({
      problem: "uses the vers scheme 'deb', which secinv cannot order (it orders semver, npm, maven, generic)",
      unsupported: true,
    });
    expect(parseVers('>=1.0')).toEqual({ problem: "is not a vers range (vers:<scheme>/<constraints>): '>=1.0'" });
    expect(parseVers('vers:generic/>=1.0|>=2.0')).toEqual({
      problem: "has two lower bounds in a row in 'vers:generic/>=1.0|>=2.0'",
    });
    expect(parseVers('vers:npm/>=one')).toEqual({
      problem: "has 'one', which is not a npm version secinv can order, in 'vers:npm/>=one'",
    });
    expect(parseVers('vers:generic/>=1.0||<2')).toEqual({
      problem: "has an empty or misplaced constraint in 'vers:generic/>=1.0||<2'",
    });
  });
});
