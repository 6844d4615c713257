// Scanner reports meet the same length limits as imports (src/domain/limits.ts), located by file and JSON path, on
// both databases: a text over its limit fails the file and writes nothing; one at its limit is stored and served.
// The texts are random: PostgreSQL would compress a repetitive one under its index limit.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { LONG_KEY_BYTES, SHORT_KEY_BYTES } from '../../src/domain/limits.js';
import { ingestSuite } from './suite.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const sample = (path: string): Json =>
  JSON.parse(readFileSync(new URL(`../fixtures/ingest/${path}`, import.meta.url), 'utf8')) as Json;

/** Random one-byte characters (none an id may not hold), `bytes` of them; mulberry32, so a failure repeats. */
let seed = 7;
function randomText(bytes: number): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789.-';
  let out = '';
  for (let i = 0; i < bytes; i += 1) {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    out += alphabet[((t ^ (t >>> 14)) >>> 0) % alphabet.length];
  }
  return out;
}

/** The Trivy sample with its first finding's fields and one misconfiguration set as given. */
function trivy(finding: Json, checkId = 'DS002'): string {
  const report = sample('trivy/trivy-image-teamdojo-multi-target.json');
  Object.assign(report.Results[0].Vulnerabilities[0], finding);
  report.Results[0].Misconfigurations = [{ ID: checkId, Status: 'FAIL', Severity: 'HIGH', Title: 'root user' }];
  return JSON.stringify(report);
}

const suite = ingestSuite();
const ingest = (files: Record<string, string>) => suite.ingest(files, { provider: 'AWS', region: 'us-east-1' });
const over = (max: number) => `must be at most ${max} bytes long in UTF-8, not ${max + 1}`;
const FIRST = '$.Results[0].Vulnerabilities[0]';

describe('length limits at ingest', () => {
  it('a text over its limit fails the file with its location and writes nothing', async () => {
    const before = (await suite.api('/v1/tenant/assets?perPage=1')).meta;
    const cases: [string, string, string | null, string][] = [
      [
        'id.json',
        trivy({ VulnerabilityID: randomText(SHORT_KEY_BYTES + 1) }),
        null,
        `the finding at ${FIRST}: record.vulnerabilityId must be 1 to ${SHORT_KEY_BYTES} bytes long in UTF-8, not ${SHORT_KEY_BYTES + 1}`,
      ],
      [
        'package.json',
        trivy({ PkgName: randomText(3000) }),
        null,
        `the finding at ${FIRST}: record.packages[0].packageName must be at most ${LONG_KEY_BYTES} bytes long in UTF-8, not 3000`,
      ],
      [
        'alias.json',
        trivy({ VendorIDs: ['GHSA-1', `ghsa-${randomText(SHORT_KEY_BYTES - 4)}`] }),
        null,
        expect.stringMatching(
          /^the finding at \$\.Results\[0\]\.Vulnerabilities\[0\]: alias 2 \(ghsa-.{15}…\) must be at most 512 bytes long in UTF-8, not 513$/,
        ),
      ],
      [
        'purl.json',
        trivy({ PkgIdentifier: { PURL: `pkg:apk/alpine/${randomText(LONG_KEY_BYTES)}@1.0` } }),
        null,
        expect.stringMatching(
          /^the finding at \$\.Results\[0\]\.Vulnerabilities\[0\]: packages\[0\]\.purl must be at most 1024 bytes/,
        ),
      ],
      [
        'check.json',
        trivy({}, randomText(SHORT_KEY_BYTES + 1)),
        '$.Results[0].Misconfigurations[0].ID',
        over(SHORT_KEY_BYTES),
      ],
    ];
    for (const [file, text, path, message] of cases) {
      const result = await ingest({ [file]: text });
      expect(result.problems, file).toEqual([{ file, path, message }]);
    }
    const vex = sample('openvex/openvex-vexctl-demo.json');
    vex['@id'] = randomText(SHORT_KEY_BYTES + 1);
    vex.statements[0].vulnerability.name = randomText(SHORT_KEY_BYTES + 1);
    expect((await ingest({ 'vex.json': JSON.stringify(vex) })).problems).toEqual([
      { file: 'vex.json', path: '$.@id', message: over(SHORT_KEY_BYTES) },
      { file: 'vex.json', path: '$.statements[0].vulnerability.name', message: over(SHORT_KEY_BYTES) },
    ]);
    expect((await suite.api('/v1/tenant/assets?perPage=1')).meta).toEqual(before);
  });

  it('texts at their limits are stored and served', async () => {
    const vulnerabilityId = randomText(SHORT_KEY_BYTES);
    const packageName = randomText(LONG_KEY_BYTES);
    const checkId = randomText(SHORT_KEY_BYTES);
    const text = trivy(
      {
        VulnerabilityID: vulnerabilityId,
        PkgName: packageName,
        VendorIDs: [randomText(SHORT_KEY_BYTES)],
        PkgIdentifier: { PURL: `pkg:apk/alpine/${randomText(LONG_KEY_BYTES - 'pkg:apk/alpine/@1'.length)}@1` },
      },
      checkId,
    );
    const result = await ingest({ 'limits.json': text });
    expect(result.problems).toEqual([]);
    const assetId = result.files[0]?.assetId ?? '';
    const found = await suite.api(`/v1/tenant/vulnerabilities?assetIds=${encodeURIComponent(assetId)}&perPage=100`);
    const finding = (found.data as Json[]).find((f) => f.vulnerabilityId === vulnerabilityId);
    expect(finding?.packages[0].packageName).toBe(packageName);
    expect((await suite.checks(undefined, assetId)).map((c) => c.checkId)).toEqual([checkId]);
  });
});
