// `secinv ingest` of failed checks on the command line: the summary line counts them, a skipped finding is one warning
// line, and `--format prowler-ocsf` keeps the advice for Prowler's other outputs.
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../helpers.js';
import { runCli } from './run.js';

const path = (name: string) => fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url));
const RESCAN = path('ingest-own/prowler-ocsf-aws-rescan.json');
const AWS_ONE = path('ingest/assets/prowler-v3-ocsf-aws-one.json');
const IMAGE = path('ingest-own/trivy-image-misconfig.json');
const CSV = path('ingest/assets/prowler-csv-aws.csv');

let db: string;
let drop: () => Promise<void>;
let tenant: string;
// A migrated copy: no test here is about a database that does not exist yet (newcomer.test.ts is).
beforeEach(async () => {
  ({ url: db, drop } = await createTestDatabase(undefined, { migrated: true }));
  tenant = (await runCli('tenants', 'create', '--name', 'checks', '--db', db)).stdout.trim();
});
afterEach(async () => drop());

describe('secinv ingest with failed checks', () => {
  it('counts failed and resolved checks per file and prints one warning for the skipped findings', async () => {
    const first = await runCli('ingest', '--tenant', tenant, '--db', db, AWS_ONE, IMAGE);
    expect(first.code).toBe(0);
    const role = `sirn:assets:${tenant}:aws:iam:role:us-east-1:arn:aws:iam::123456789012:role/myAdministratorExecutionRole`;
    expect(first.stderr).toContain(
      `${AWS_ONE}: prowler-ocsf, asset ${role} created, failed checks 1 (1 new), 0 resolved\n`,
    );
    expect(first.stderr).toMatch(
      new RegExp(
        `${IMAGE}: trivy, asset \\S+ created, findings 1 added, 0 updated, 0 unchanged, 0 resolved, failed checks 3 \\(3 new\\), 0 resolved\\n`,
      ),
    );
    const second = await runCli('ingest', '--tenant', tenant, '--format', 'prowler-ocsf', '--db', db, RESCAN);
    expect(second.code).toBe(0);
    expect(second.stderr).toContain(
      `${RESCAN}: prowler-ocsf, 4 assets (3 created, 0 unchanged), failed checks 3 (3 new), 1 resolved\n` +
        `${RESCAN}: warning: 2 findings without a resource uid were skipped\n`,
    );
    expect(second.stderr.match(/warning/g)).toHaveLength(1);
    const listed = JSON.parse((await runCli('tenants', 'list', '--json', '--db', db)).stdout) as { assets: number }[];
    expect(listed[0]?.assets).toBe(5);
  });

  it('refuses Prowler CSV under --format prowler-ocsf with the output to ask for', async () => {
    const result = await runCli('ingest', '--tenant', tenant, '--format', 'prowler-ocsf', '--db', db, CSV);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `${CSV}: is Prowler CSV output, which is not supported: run prowler with \`--output-formats json-ocsf\`\n`,
    );
  });
});
