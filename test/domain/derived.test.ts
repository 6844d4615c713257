// The derived-field and text-match rules of the domain layer, one by one.
import { describe, expect, it } from 'vitest';
import { derivedAssetFields, secretCountFields } from '../../src/domain/assets.js';
import {
  deriveAssetFields,
  hasVendorFix,
  secretCounts,
  severityLevelValue,
  vulnerabilityScore,
  type DerivedAssetFields,
} from '../../src/domain/derived.js';
import { findingSeverities } from '../../src/domain/enums.js';
import {
  META_SEPARATOR,
  metadataMatches,
  metadataSearchText,
  nameMatches,
  serviceMatches,
  serviceName,
} from '../../src/domain/search.js';

describe('vulnerabilityScore', () => {
  it('is 0 without findings and grows with count and severity, within 0 to 10', () => {
    const zero = { critical: 0, high: 0, medium: 0, low: 0 };
    expect(vulnerabilityScore(zero)).toBe(0);
    expect(vulnerabilityScore({ ...zero, low: 1 })).toBeLessThan(vulnerabilityScore({ ...zero, medium: 1 }));
    expect(vulnerabilityScore({ ...zero, medium: 1 })).toBeLessThan(vulnerabilityScore({ ...zero, high: 1 }));
    expect(vulnerabilityScore({ ...zero, high: 1 })).toBeLessThan(vulnerabilityScore({ ...zero, critical: 1 }));
    expect(vulnerabilityScore({ ...zero, high: 1 })).toBeLessThan(vulnerabilityScore({ ...zero, high: 2 }));
    expect(vulnerabilityScore({ ...zero, critical: 1 })).toBe(7.13);
    expect(vulnerabilityScore({ critical: 1000, high: 0, medium: 0, low: 0 })).toBe(10);
  });
});

const finding = (
  severity: (typeof findingSeverities)[number],
  flags: Partial<{ hasKev: boolean; hasExploit: boolean; isExploitable: boolean }> = {},
) => ({
  severityLevelValue: severityLevelValue(severity),
  hasKev: false,
  hasExploit: false,
  isExploitable: false,
  ...flags,
});

describe('deriveAssetFields', () => {
  it('an asset without counted findings is not vulnerable and scores 0', () => {
    expect(deriveAssetFields([])).toEqual({
      isVulnerable: false,
      numberOfLowVulnerabilities: 0,
      numberOfMediumVulnerabilities: 0,
      numberOfHighVulnerabilities: 0,
      numberOfCriticalVulnerabilities: 0,
      vulnerabilityScore: 0,
      hasKev: false,
      hasExploit: false,
      isExploitable: false,
    });
  });

  it('counts each severity, ORs the flags, and scores with vulnerabilityScore', () => {
    const derived = deriveAssetFields([
      finding('CRITICAL'),
      finding('HIGH', { hasKev: true }),
      finding('HIGH'),
      finding('MEDIUM', { isExploitable: true }),
      finding('LOW', { hasExploit: true }),
    ]);
    expect(derived).toEqual({
      isVulnerable: true,
      numberOfLowVulnerabilities: 1,
      numberOfMediumVulnerabilities: 1,
      numberOfHighVulnerabilities: 2,
      numberOfCriticalVulnerabilities: 1,
      vulnerabilityScore: vulnerabilityScore({ critical: 1, high: 2, medium: 1, low: 1 }),
      hasKev: true,
      hasExploit: true,
      isExploitable: true,
    });
  });

  it('INFORMATIONAL and UNKNOWN findings make an asset vulnerable but count nowhere', () => {
    expect(deriveAssetFields([finding('INFORMATIONAL', { hasKev: true }), finding('UNKNOWN')])).toMatchObject({
      isVulnerable: true,
      numberOfLowVulnerabilities: 0,
      numberOfCriticalVulnerabilities: 0,
      vulnerabilityScore: 0,
      hasKev: true,
    });
  });

  it('names exactly the asset fields the schema marks as derived', () => {
    const keys: (keyof DerivedAssetFields)[] = [...derivedAssetFields];
    expect(Object.keys(deriveAssetFields([])).sort()).toEqual(keys.sort());
  });
});

describe('finding and asset rules', () => {
  it('severityLevelValue ranks CRITICAL 5 down to UNKNOWN 0', () => {
    expect(findingSeverities.map(severityLevelValue)).toEqual([5, 4, 3, 2, 1, 0]);
  });

  it('hasVendorFix: any package with a non-empty fixedVersion', () => {
    expect(hasVendorFix([])).toBe(false);
    expect(hasVendorFix([{ fixedVersion: null }, { fixedVersion: '' }])).toBe(false);
    expect(hasVendorFix([{ fixedVersion: null }, { fixedVersion: '1.2.3' }])).toBe(true);
  });

  it('secret counts are the lengths of the secret arrays', () => {
    const counts = secretCounts({
      lowSecrets: [1],
      mediumSecrets: [],
      highSecrets: [1, 2],
      criticalSecrets: [1, 2, 3],
    });
    expect(counts).toEqual({
      numberOfLowSecrets: 1,
      numberOfMediumSecrets: 0,
      numberOfHighSecrets: 2,
      numberOfCriticalSecrets: 3,
    });
    expect(Object.keys(counts)).toEqual([...secretCountFields]);
  });
});

describe('text matching', () => {
  it('nameMatches: a case-insensitive substring; no name never matches', () => {
    expect(nameMatches('Payments-API', 'ments-a')).toBe(true);
    expect(nameMatches('100%_done', '%_')).toBe(true);
    expect(nameMatches('abc', '%')).toBe(false);
    expect(nameMatches(null, 'a')).toBe(false);
  });

  it('serviceMatches: qualified items match the whole value, bare items the service of any provider', () => {
    expect(serviceName('AWS::EC2')).toBe('ec2');
    expect(serviceName('EC2')).toBe('ec2');
    expect(serviceName('AWS::Lambda::Extra')).toBe('extra');
    expect(serviceMatches('AWS::EC2', ['ec2'])).toBe(true);
    expect(serviceMatches('AWS::EC2', ['aws::ec2'])).toBe(true);
    expect(serviceMatches('AWS::EC2', ['ws::ec2'])).toBe(false);
    expect(serviceMatches('EC2', ['EC2'])).toBe(true);
    expect(serviceMatches(null, ['ec2'])).toBe(false);
  });

  it('metadata: keys and scalar values, lower-cased, never across two tokens', () => {
    const text = metadataSearchText({ State: 'Running', Ports: [22, 443], nested: { On: true, none: null } });
    expect(text.split(META_SEPARATOR)).toEqual([
      'state',
      'running',
      'ports',
      '22',
      '443',
      'nested',
      'on',
      'true',
      'none',
    ]);
    expect(metadataMatches(text, 'RUN')).toBe(true);
    expect(metadataMatches(text, 'null')).toBe(false);
    expect(metadataMatches(text, `state${META_SEPARATOR}running`)).toBe(false);
  });
});
