// Ingest benchmark: a generated Trivy image report of many findings, ingested through `secinv ingest`'s code path into
// a fresh database, then the same findings as a second image into that database (which now holds the first image, so
// its indexes are kept up to date row by row rather than built at the end); prints findings per second and the peak
// resident memory of each. The reports are written to a temporary folder and removed afterwards.
// Usage: npm run bench:ingest [-- --findings N --db URL]. The ingest is timed in a process of its own
// (bench/ingest-measure.js) on the built modules, as `secinv ingest` runs (the script builds them first): tsx's loader
// alone takes ~45 MB of resident memory, which the command never spends.
import { spawnSync } from 'node:child_process';
import { createReadStream, createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const { values: args } = parseArgs({
  options: { findings: { type: 'string', default: '200000' }, db: { type: 'string' } },
});
const findings = Number(args.findings);
const dir = mkdtempSync(join(tmpdir(), 'secinv-bench-ingest-'));
const dbUrl = args.db ?? `sqlite:${join(dir, 'bench.db')}`;
const report = join(dir, 'trivy.json');
const second = join(dir, 'trivy-second-image.json');

// Findings spread over Results of 1,000 each, as a large image with many language packages would have them.
const out = createWriteStream(report);
const write = async (text: string) => {
  if (!out.write(text)) await once(out, 'drain');
};
const header = (app: string, digest: string) =>
  `{"SchemaVersion":2,"CreatedAt":"2026-11-01T00:00:00Z","ArtifactName":"123456789012.dkr.ecr.us-east-1.amazonaws.com/bench/${app}:1.0","ArtifactType":"container_image","Metadata":{"OS":{"Family":"debian","Name":"12.5"},"ImageID":"sha256:${digest.repeat(64)}","RepoDigests":["123456789012.dkr.ecr.us-east-1.amazonaws.com/bench/${app}@sha256:${digest.repeat(64)}"]},"Results":[`;
const first = header('app', 'a');
await write(first);
const severities = ['CRITICAL', 'HIGH', 'MEDIUM', 'LOW', 'UNKNOWN'];
for (let r = 0; r * 1000 < findings; r += 1) {
  await write(`${r ? ',' : ''}{"Target":"app/lib${r}","Class":"lang-pkgs","Type":"jar","Vulnerabilities":[`);
  for (let i = r * 1000; i < Math.min(findings, (r + 1) * 1000); i += 1) {
    const row = {
      VulnerabilityID: `CVE-${2000 + (i % 25)}-${100000 + i}`,
      PkgName: `org.example:lib${i % 3000}`,
      PkgPath: `app/libs/lib${i % 3000}.jar`,
      InstalledVersion: '1.2.3',
      FixedVersion: i % 3 === 0 ? '1.2.4' : undefined,
      SeveritySource: 'nvd',
      PrimaryURL: `https://avd.aquasec.com/nvd/cve-${2000 + (i % 25)}-${100000 + i}`,
      Title: `Example library ${i % 3000}: a flaw in request parsing`,
      Description: 'A flaw in request parsing lets a remote attacker cause a denial of service. '.repeat(3),
      Severity: severities[i % severities.length],
      CweIDs: ['CWE-400'],
      CVSS: { nvd: { V3Vector: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:N/I:N/A:H', V3Score: 7.5 } },
    };
    await write(`${i % 1000 ? ',' : ''}${JSON.stringify(row)}`);
  }
  await write(']}');
}
await write(']}');
out.end();
await once(out, 'finish');
// The second image: another name and digest, the same findings (the rest of the file after the header).
const copy = createWriteStream(second);
copy.write(header('other', 'c'));
await pipeline(createReadStream(report, { start: Buffer.byteLength(first) }), copy);

try {
  for (const [file, label] of [
    [report, 'into an empty database'],
    [second, 'as a second image'],
  ] as const) {
    const measured = spawnSync(
      process.execPath,
      [fileURLToPath(new URL('./ingest-measure.js', import.meta.url)), dbUrl, file, String(findings), label],
      { stdio: 'inherit' },
    );
    if (measured.status !== 0) process.exitCode = 1;
  }
} finally {
  if (!process.env.KEEP_REPORT) rmSync(dir, { recursive: true, force: true });
  else process.stdout.write(`kept ${report} and ${second}\n`);
}
