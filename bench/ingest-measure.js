// The measuring half of bench/ingest.ts, in a process of its own as `secinv ingest` runs: plain Node on the built
// modules, with none of the report's generation in its memory. Prints one line; exits 1 if the ingest found problems.
// Usage (from bench/ingest.ts): node bench/ingest-measure.js DATABASE_URL REPORT FINDINGS [LABEL]
import { createReadStream, statSync } from 'node:fs';

const [dbUrl, report, findingsText, label = ''] = process.argv.slice(2);
const built = (path) => import(new URL(`../dist/${path}`, import.meta.url).href);
const { boundBulkHeap } = await built('cli/memory.js');
const { ingestFiles } = await built('ingest/ingest.js');
const { openStorage } = await built('storage/index.js');

// The heap growth `secinv ingest` runs with, so that the peak printed is the command's.
boundBulkHeap(dbUrl);
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
  // CPU time (user + system, both threads) moves less than wall time on a machine shared with other work.
  const cpu = process.cpuUsage(cpuBefore);
  const cpuSeconds = (cpu.user + cpu.system) / 1e6;
  const peak = peakRss();
  if (result.problems.length > 0) {
    process.stderr.write(`${JSON.stringify(result.problems.slice(0, 3))}\n`);
    process.exitCode = 1;
  } else {
    const findings = Number(findingsText);
    const mb = statSync(report).size / 1e6;
    process.stdout.write(
      `ingest ${storage.dialect}${label === '' ? '' : ` ${label}`}: ${findings.toLocaleString('en-US')} findings (${mb.toFixed(0)} MB) in ${seconds.toFixed(1)} s = ${Math.round(findings / seconds).toLocaleString('en-US')} findings/s (CPU ${cpuSeconds.toFixed(1)} s), peak RSS ${Math.round(peak / 1e6)} MB\n`,
    );
  }
} finally {
  await storage.close();
}
