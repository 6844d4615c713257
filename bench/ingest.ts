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
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { trivyHeader, writeTrivyReport } from './trivy-report.js';

const { values: args } = parseArgs({
  options: { findings: { type: 'string', default: '200000' }, db: { type: 'string' } },
});
const findings = Number(args.findings);
const dir = mkdtempSync(join(tmpdir(), 'secinv-bench-ingest-'));
const dbUrl = args.db ?? `sqlite:${join(dir, 'bench.db')}`;
const report = join(dir, 'trivy.json');
const second = join(dir, 'trivy-second-image.json');

// Findings spread over Results of 1,000 each, as a large image with many language packages would have them.
await writeTrivyReport(report, { app: 'app', digit: 'a', findings, shape: 'lean' });
// The second image: another name and digest, the same findings (the rest of the file after the header).
const copy = createWriteStream(second);
copy.write(trivyHeader({ app: 'other', digit: 'c' }));
await pipeline(createReadStream(report, { start: Buffer.byteLength(trivyHeader({ app: 'app', digit: 'a' })) }), copy);

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
