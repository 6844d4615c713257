import { describe, expect, it } from 'vitest';
import {
  compileExemption,
  inForce,
  matchingExemptions,
  type MatchableAsset,
  type MatchableFinding,
} from '../../src/domain/exemptions.js';
import type { ExemptionRule } from '../../src/domain/vulnerabilities.js';

const NOW = Date.parse('2026-12-02T12:00:00.000Z');
const finding: MatchableFinding = { assetId: 'asset-1', vulnerabilityId: 'CVE-1', hasVendorFix: false };
const asset: MatchableAsset = { region: 'us-east-1', tags: [{ Key: 'env', Value: 'prod' }], groupIds: new Set(['g1']) };

const unset: ExemptionRule = {
  exemptionType: null,
  vulnerabilityId: null,
  vulnerabilityIds: null,
  assetIds: null,
  assetGroupIds: null,
  assetRegions: null,
  assetTags: null,
  noVendorFix: false,
};
const matches = (rule: Partial<ExemptionRule>, f: MatchableFinding = finding, a: MatchableAsset = asset): boolean =>
  matchingExemptions(
    [
      compileExemption('x', {
        name: null,
        reason: null,
        createdAt: null,
        updatedAt: null,
        rules: [{ ...unset, ...rule }],
      }),
    ],
    f,
    a,
    NOW,
  ).length === 1;

describe('exemption rule criteria', () => {
  const cases: [string, Partial<ExemptionRule>, boolean][] = [
    ['vulnerabilityId equal', { vulnerabilityId: 'CVE-1' }, true],
    ['vulnerabilityId other', { vulnerabilityId: 'CVE-2' }, false],
    ['vulnerabilityIds contains', { vulnerabilityIds: ['CVE-0', 'CVE-1'] }, true],
    ['vulnerabilityIds not', { vulnerabilityIds: ['CVE-0'] }, false],
    ['assetIds contains', { assetIds: ['asset-1'] }, true],
    ['assetIds not', { assetIds: ['asset-2'] }, false],
    ['assetGroupIds contains a group of the asset', { assetGroupIds: ['g0', 'g1'] }, true],
    ['assetGroupIds not', { assetGroupIds: ['g2'] }, false],
    ['assetRegions contains', { assetRegions: ['us-east-1'] }, true],
    ['assetRegions is case-sensitive', { assetRegions: ['US-EAST-1'] }, false],
    ['assetTags equal pair', { assetTags: [{ key: 'env', value: 'prod' }] }, true],
    ['assetTags value differs in case', { assetTags: [{ key: 'env', value: 'Prod' }] }, false],
    ['assetTags key matches, value not', { assetTags: [{ key: 'env', value: 'dev' }] }, false],
    ['noVendorFix true without a fix', { noVendorFix: true }, true],
    [
      'all criteria hold',
      { vulnerabilityId: 'CVE-1', assetRegions: ['us-east-1'], noVendorFix: true, assetGroupIds: ['g1'] },
      true,
    ],
    ['one of several criteria fails', { vulnerabilityId: 'CVE-1', assetRegions: ['eu-west-1'] }, false],
    ['no criterion matches nothing', {}, false],
    [
      'empty string and empty lists set nothing',
      { vulnerabilityId: '', vulnerabilityIds: [], assetIds: [], assetTags: [] },
      false,
    ],
    ['empty string beside a real criterion is ignored', { vulnerabilityId: '', assetIds: ['asset-1'] }, true],
    ['exemptionType alone sets nothing', { exemptionType: 'ACCEPTED_RISK' }, false],
    ['exemptionType does not change matching', { exemptionType: 'anything', assetIds: ['asset-1'] }, true],
  ];
  for (const [name, rule, expected] of cases) it(name, () => expect(matches(rule)).toBe(expected));

  it('noVendorFix does not hold when the finding has a vendor fix', () => {
    expect(matches({ noVendorFix: true }, { ...finding, hasVendorFix: true })).toBe(false);
  });

  it('an asset without region or groups fails those criteria', () => {
    const bare: MatchableAsset = { region: null, tags: [], groupIds: new Set() };
    expect(matches({ assetRegions: ['us-east-1'] }, finding, bare)).toBe(false);
    expect(matches({ assetGroupIds: ['g1'] }, finding, bare)).toBe(false);
    expect(matches({ assetTags: [{ key: 'env', value: 'prod' }] }, finding, bare)).toBe(false);
  });

  it('an exemption matches when any one of its rules matches, and every matching exemption is returned', () => {
    const base = { name: null, reason: null, createdAt: null, updatedAt: null };
    const exemptions = [
      compileExemption('e1', {
        ...base,
        rules: [
          { ...unset, vulnerabilityId: 'CVE-9' },
          { ...unset, assetIds: ['asset-1'] },
        ],
      }),
      compileExemption('e2', { ...base, rules: [{ ...unset, assetRegions: ['us-east-1'] }] }),
      compileExemption('e3', { ...base, rules: [{ ...unset, assetRegions: ['eu-west-1'] }] }),
      compileExemption('e4', { ...base, rules: [] }),
    ];
    expect(matchingExemptions(exemptions, finding, asset, NOW)).toEqual(['e1', 'e2']);
  });
});

describe('exemptions that expire', () => {
  const base = { name: null, reason: null, createdAt: null, updatedAt: null };
  const rules = [{ ...unset, vulnerabilityId: 'CVE-1' }];
  const at = (expiresAt: string | null | undefined) =>
    matchingExemptions(
      [compileExemption('x', expiresAt === undefined ? { ...base, rules } : { ...base, rules, expiresAt })],
      finding,
      asset,
      NOW,
    );

  it('match while expiresAt is after now, and never again from it on', () => {
    expect(at('2026-12-02T12:00:00.001Z')).toEqual(['x']);
    expect(at('2026-12-02T12:00:00.000Z')).toEqual([]);
    expect(at('2026-12-01T00:00:00.000Z')).toEqual([]);
  });

  it('without expiresAt (absent or null) match always', () => {
    expect(at(undefined)).toEqual(['x']);
    expect(at(null)).toEqual(['x']);
  });

  it('inForce is the one rule: the instant itself is out', () => {
    expect(inForce(null, NOW)).toBe(true);
    expect(inForce(NOW + 1, NOW)).toBe(true);
    expect(inForce(NOW, NOW)).toBe(false);
    expect(inForce(NOW - 1, NOW)).toBe(false);
  });
});
