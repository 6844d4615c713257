// The rule that combines a finding's own intel fields with the loaded feeds (src/domain/intel.ts).
import { describe, expect, it } from 'vitest';
import {
  enrich,
  feedVersionDate,
  intelKeys,
  isOlderFeed,
  knownExploitOf,
  NO_INTEL,
  ownIntel,
  type KevEntry,
} from '../../src/domain/intel.js';

const kev = (cveID: string, vendorProject = 'V'): KevEntry => ({
  cveID,
  vendorProject,
  product: 'P',
  vulnerabilityName: 'N',
  dateAdded: '2026-01-01',
  dueDate: '2026-01-22',
  shortDescription: 'S',
  requiredAction: 'R',
  notes: '',
  knownRansomwareCampaignUse: 'Known',
  cwes: ['CWE-79'],
});
const exploit = (id: string, source = 'Exploit-DB') => ({ id, title: id, description: null, source, sourceUrl: null });

describe('intel keys', () => {
  it('are the id and then the aliases, upper-cased, each once, blanks dropped', () => {
    expect(intelKeys('cve-2024-1', ['GHSA-x', 'CVE-2024-1', ' ', 'cve-2024-2'])).toEqual([
      'CVE-2024-1',
      'GHSA-X',
      'CVE-2024-2',
    ]);
  });
});

describe('enrich', () => {
  it('without feeds, a finding keeps what it has', () => {
    expect(enrich(null, [], [])).toEqual(NO_INTEL);
    const own = { hasKev: true, hasExploit: false, knownExploit: null, exploits: [] };
    expect(enrich(own, [], [])).toEqual(own);
  });

  it("a catalog entry sets hasKev and fills knownExploit with the API's nine fields, the first key's entry winning", () => {
    const intel = enrich(null, [kev('CVE-1', 'first'), kev('CVE-2', 'second')], []);
    expect(intel.hasKev).toBe(true);
    expect(intel.knownExploit).toEqual(knownExploitOf(kev('CVE-1', 'first')));
    expect(Object.keys(intel.knownExploit ?? {})).toHaveLength(9);
    expect(intel.knownExploit).not.toHaveProperty('cwes');
  });

  it("a finding's own knownExploit and exploits stay first; a feed only adds", () => {
    const ownKnown = knownExploitOf(kev('CVE-1', 'from the file'));
    const own = { hasKev: false, hasExploit: true, knownExploit: ownKnown, exploits: [exploit('1')] };
    const intel = enrich(own, [kev('CVE-1', 'catalog')], [exploit('1'), exploit('2'), exploit('1', 'Other')]);
    expect(intel.hasKev).toBe(true);
    expect(intel.knownExploit).toEqual(ownKnown);
    expect(intel.exploits.map((e) => `${e.source}:${e.id}`)).toEqual(['Exploit-DB:1', 'Exploit-DB:2', 'Other:1']);
  });

  it('hasExploit follows any exploit of a key, even one the finding already listed', () => {
    const own = { hasKev: false, hasExploit: false, knownExploit: null, exploits: [exploit('1')] };
    expect(enrich(own, [], [exploit('1')]).hasExploit).toBe(true);
    expect(enrich(null, [], []).hasExploit).toBe(false);
  });

  it('own intel is kept only when it says something', () => {
    expect(ownIntel({ ...NO_INTEL })).toBeNull();
    expect(ownIntel({ ...NO_INTEL, hasKev: true })).toEqual({ ...NO_INTEL, hasKev: true });
  });
});

describe('feed versions by their dates', () => {
  it('reads the date each feed puts first in its version', () => {
    expect(feedVersionDate('2025.01.24')).toBe('20250124');
    expect(feedVersionDate('2026-09-29 (model v2026.06.15)')).toBe('20260929');
    expect(feedVersionDate('2023-07-11')).toBe('20230711');
    expect(feedVersionDate('v2026.06.15')).toBeNull();
    expect(feedVersionDate('2025.01.241')).toBeNull();
    expect(feedVersionDate(null)).toBeNull();
  });

  it('calls a file older only when both are dated and its date is earlier', () => {
    expect(isOlderFeed('2025.01.20', '2025.01.24')).toBe(true);
    expect(isOlderFeed('2026-09-01', '2026-09-29 (model v2026.06.15)')).toBe(true);
    expect(isOlderFeed('2025.01.24', '2025.01.24')).toBe(false);
    expect(isOlderFeed('2025.02.01', '2025.01.24')).toBe(false);
    expect(isOlderFeed('v2026.06.15', '2026-09-29 (model v2026.06.15)')).toBe(false);
    expect(isOlderFeed('2025.01.20', null)).toBe(false);
  });
});
