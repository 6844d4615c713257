// The demo's scan history (src/generate/history.ts): the same options give the same reports, and from one week to the
// next an image's scan drops some CVEs and adds others.
import { describe, expect, it } from 'vitest';
import { buildTenant } from '../../src/generate/tenants.js';
import { settingsOf, type GenerateOptions } from '../../src/generate/settings.js';
import { scanHistory, type HistoryOptions } from '../../src/generate/history.js';

const OPTIONS: GenerateOptions = {
  seed: 'history',
  tenants: 2,
  assets: 10,
  findingsPerAsset: 3,
  risks: 0,
  now: new Date('2026-06-30T12:00:00.000Z'),
};
const HISTORY: HistoryOptions = { images: 6, weeks: 10 };

interface Report {
  CreatedAt: string;
  ArtifactName: string;
  Metadata: { RepoDigests: string[] };
  Results: { Vulnerabilities: { VulnerabilityID: string; Severity: string }[] }[];
}

const scans = [...scanHistory(OPTIONS, HISTORY)];
const cves = (text: string): Set<string> =>
  new Set((JSON.parse(text) as Report).Results.flatMap((r) => r.Vulnerabilities.map((v) => v.VulnerabilityID)));

describe('the demo scan history', () => {
  it('is the same for the same options and differs with the seed', () => {
    expect([...scanHistory(OPTIONS, HISTORY)]).toEqual(scans);
    const other = [...scanHistory({ ...OPTIONS, seed: 'other' }, HISTORY)];
    expect(other.map((s) => s.reports.map((r) => r.text))).not.toEqual(scans.map((s) => s.reports.map((r) => r.text)));
  });

  it('scans every image of each tenant once a week, the last at `now`, in the order to ingest them', () => {
    const s = settingsOf(OPTIONS);
    const tenants = [0, 1].map((t) => buildTenant(s, t).tenantId);
    expect(scans).toHaveLength(HISTORY.weeks * tenants.length);
    expect(scans.map((scan) => scan.tenantId)).toEqual(Array.from({ length: HISTORY.weeks }, () => tenants).flat());
    const times = scans.filter((scan) => scan.tenantId === tenants[0]).map((scan) => Date.parse(scan.at));
    expect(times.at(-1)).toBe(OPTIONS.now!.getTime());
    expect(times.slice(1).map((t, i) => t - times[i]!)).toEqual(Array(HISTORY.weeks - 1).fill(7 * 86_400_000));
    for (const scan of scans) {
      expect(scan.reports).toHaveLength(HISTORY.images);
      const reports = scan.reports.map((r) => JSON.parse(r.text) as Report);
      expect(reports.every((r) => r.CreatedAt === scan.at)).toBe(true);
      // One digest per image, hence one asset per image.
      expect(new Set(reports.map((r) => r.Metadata.RepoDigests[0])).size).toBe(HISTORY.images);
    }
  });

  it('drops some CVEs of an image from one scan to the next and adds new ones', () => {
    const ofTenant = scans.filter((scan) => scan.tenantId === scans[0]!.tenantId);
    let dropped = 0;
    let added = 0;
    for (let w = 1; w < ofTenant.length; w++) {
      ofTenant[w]!.reports.forEach((report, i) => {
        const before = cves(ofTenant[w - 1]!.reports[i]!.text);
        const after = cves(report.text);
        dropped += [...before].filter((id) => !after.has(id)).length;
        added += [...after].filter((id) => !before.has(id)).length;
      });
    }
    expect(dropped).toBeGreaterThan(0);
    expect(added).toBeGreaterThan(0);
  });
});
