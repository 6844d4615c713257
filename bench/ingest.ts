// Ingest benchmark: a generated Trivy image report of many findings, ingested through `secinv ingest`'s code path into
// a fresh database; prints findings per second and the peak resident memory. The report is written to a temporary
// file and removed afterwards.
// Usage: npm run bench:ingest [-- --findings N --db URL]
import { createReadStream, createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { boundIngestHeap } from '../src/cli/memory.js';
import { ingestFiles } from '../src/ingest/ingest.js';
import { openStorage } from '../src/storage/index.js';

const { values: args } = parseArgs({
  options: { findings: { type: 'string', default: '200000' }, db: { type: 'string' } },
});
const findings = Number(args.findings);
const dir = mkdtempSync(join(tmpdir(), 'secinv-bench-ingest-'));
const dbUrl = args.db ?? `sqlite:${join(dir, 'bench.db')}`;
const report = join(dir, 'trivy.json');
// The heap growth `secinv ingest` runs with (on SQLite only), so that the peak printed is the command's.
boundIngestHeap(dbUrl);

// Findings spread over Results of 1,000 each, as a large image with many language packages would have them.
const out = createWriteStream(report);
const write = async (text: string) => {
  if (!out.write(text)) await once(out, 'drain');
};
await write(
  `{"SchemaVersion":2,"CreatedAt":"2026-11-01T00:00:00Z","ArtifactName":"123456789012.dkr.ecr.us-east-1.amazonaws.com/bench/app:1.0","ArtifactType":"container_image","Metadata":{"OS":{"Family":"debian","Name":"12.5"},"ImageID":"sha256:${'a'.repeat(64)}","RepoDigests":["123456789012.dkr.ecr.us-east-1.amazonaws.com/bench/app@sha256:${'b'.repeat(64)}"]},"Results":[`,
);
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

const storage = await openStorage(dbUrl);
try {
  // The kernel's high-water mark: a timer sampling process.memoryUsage() never runs while the write path's
  // synchronous statements resolve one promise after another, and under-reported the peak by 2.5×.
  const peakRss = () => process.resourceUsage().maxRSS * 1024;
  const tenantId = '00000000-0000-4000-8000-000000000001';
  await storage.createTenant({ tenantId, organizationId: '00000000-0000-4000-8000-000000000002', name: 'bench' });
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  const result = await ingestFiles(storage, [{ name: report, open: () => createReadStream(report) }], {
    tenantId,
    format: 'auto',
    resolve: true,
    dryRun: false,
  });
  const seconds = (performance.now() - started) / 1000;
  // CPU time (user + system) moves less than wall time on a machine shared with other work.
  const cpu = process.cpuUsage(cpuBefore);
  const cpuSeconds = (cpu.user + cpu.system) / 1e6;
  const peak = peakRss();
  if (result.problems.length > 0) throw new Error(JSON.stringify(result.problems.slice(0, 3)));
  const mb = statSync(report).size / 1e6;
  process.stdout.write(
    `ingest ${storage.dialect}: ${findings.toLocaleString('en-US')} findings (${mb.toFixed(0)} MB) in ${seconds.toFixed(1)} s = ${Math.round(findings / seconds).toLocaleString('en-US')} findings/s (CPU ${cpuSeconds.toFixed(1)} s), peak RSS ${Math.round(peak / 1e6)} MB\n`,
  );
} finally {
  await storage.close();
  if (!process.env.KEEP_REPORT) rmSync(dir, { recursive: true, force: true });
  else process.stdout.write(`kept ${report}\n`);
}
