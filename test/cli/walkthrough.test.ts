// The whole path a user takes, on the command line and then through the API, on a real database of each dialect:
// create a tenant, load the sample feeds, ingest every sample report; the API shows the image and Kubernetes assets,
// findings with packages, KEV and exploit data, exemptions from VEX; the same ingest again changes nothing; an older
// report of an image resolves what it no longer lists.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { openStorage, type Storage } from '../../src/storage/index.js';
import { createTestDatabase } from '../helpers.js';
import { runCli } from './run.js';

const sample = (path: string) => fileURLToPath(new URL(`../fixtures/ingest/${path}`, import.meta.url));
const own = (path: string) => fileURLToPath(new URL(`../fixtures/ingest-own/${path}`, import.meta.url));
type Json = Record<string, unknown>;

let db: string;
let dir: string;
let drop: () => Promise<void>;
let tenant: string;
let key: string;
let storage: Storage;
let app: Awaited<ReturnType<typeof buildApp>>;
const INSTANCE = 'sirn:assets:walkthrough:aws:ec2:instance:us-east-1:i-0abc';

beforeAll(async () => {
  ({ url: db, dir, drop } = await createTestDatabase());
});
afterAll(async () => {
  await app?.close();
  await storage?.close();
  await drop();
});

const cli = async (...argv: string[]) => {
  const run = await runCli(...argv, '--db', db);
  expect(run.stderr.includes('problem') ? run.stderr : '', run.stderr).toBe('');
  expect(run.code, run.stderr).toBe(0);
  return run;
};
const api = async (url: string): Promise<Json> => {
  const res = await app.inject({ url, headers: { authorization: `Bearer ${key}` } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<Json>();
};
const all = async (path: string): Promise<Json[]> =>
  (await api(`${path}${path.includes('?') ? '&' : '?'}perPage=1000`)).data as Json[];

describe('from a clean database to answers', () => {
  it('tenant, feeds, every sample report', async () => {
    tenant = (await cli('tenants', 'create', '--name', 'walkthrough')).stdout.trim();
    // An instance to attach the file-system, repository and VM scans and the SBOMs to.
    const instance = join(dir, 'instance.ndjson');
    writeFileSync(
      instance,
      `${JSON.stringify({
        kind: 'asset',
        record: {
          tenantId: tenant,
          id: INSTANCE,
          provider: 'AWS',
          type: 'AWS::EC2::Instance',
          region: 'us-east-1',
          name: 'build-host',
          firstObservedAt: '2026-01-01T00:00:00Z',
          lastObservedAt: '2026-01-01T00:00:00Z',
        },
      })}\n`,
    );
    await cli('import', instance);
    await cli(
      'feeds',
      'load',
      sample('kev/known_exploited_vulnerabilities.2025.01.24.excerpt.json'),
      sample('epss/epss_scores-2026-09-29.excerpt-a.csv'),
      sample('exploitdb/files_exploits.excerpt-a.csv'),
    );
    const images = [
      'trivy/trivy-image-teamdojo-multi-target.json',
      'trivy/trivy-image-example-app-all-statuses.json',
      'grype/grype-image-busybox-epss.json',
      'grype/grype-image-chainguard-ruby.json',
      'grype/grype-image-same-cve-two-paths.json',
    ].map(sample);
    await cli('ingest', '--tenant', tenant, '--provider', 'AWS', '--region', 'us-east-1', ...images);
    await cli(
      'ingest',
      '--tenant',
      tenant,
      '--cluster',
      'minikube',
      ...['trivy-k8s-minikube-resources.json', 'trivy-operator-vulnreport-many.json'].map((f) =>
        sample(`trivy-k8s/${f}`),
      ),
    );
    for (const file of [
      'trivy/trivy-repo-npm.json',
      'trivy/trivy-vm-amazonlinux2.json',
      'grype/grype-dir-v024.json',
      'cyclonedx/cdx-1.4-log4j-in-triage.json',
    ])
      await cli('ingest', '--tenant', tenant, '--asset', INSTANCE, sample(file));
    await cli(
      'ingest',
      '--tenant',
      tenant,
      ...[
        'cyclonedx/cdx-vex-1.4-cisa-case8-bomlink.json',
        'cyclonedx/cdx-1.6-spec-valid-vulnerability.json',
        'openvex/openvex-many-statuses.json',
        'openvex/openvex-vexctl-demo.json',
        'openvex/openvex-grype-processor.json',
      ].map(sample),
      own('openvex-busybox.json'),
    );
    key = (await cli('keys', 'create', '--tenant', tenant)).stdout.trim();
    storage = await openStorage(db, { role: 'api' });
    app = await buildApp({ storage });
  });

  it('the API shows the image and Kubernetes assets and their findings with packages', async () => {
    const assets = await all('/v1/tenant/assets');
    const types = new Set(assets.map((a) => a.type));
    expect(types).toEqual(
      new Set([
        'AWS::EC2::Instance',
        'AWS::ECR::Image',
        'Kubernetes::Core::Service',
        'Kubernetes::Core::ServiceAccount',
        'Kubernetes::Core::ConfigMap',
        'Kubernetes::Rbac::Role',
        'Kubernetes::Apps::StatefulSet',
        'Kubernetes::Apps::ReplicaSet',
      ]),
    );
    expect(assets.filter((a) => a.type === 'AWS::ECR::Image')).toHaveLength(5);
    const workload = assets.find((a) => a.type === 'Kubernetes::Apps::ReplicaSet') as Json;
    const libtiff = await all(
      `/v1/tenant/vulnerabilities?assetIds=${encodeURIComponent(String(workload.id))}&packageName=tiff`,
    );
    expect(libtiff.length).toBeGreaterThan(0);
  });

  it('KEV and Exploit-DB fill hasKev, knownExploit and exploits; the assets follow', async () => {
    const kev = await all('/v1/tenant/vulnerabilities?hasKev=true');
    expect(kev.map((f) => f.vulnerabilityId).sort()).toEqual(['CVE-2020-15999', 'CVE-2021-44228', 'CVE-2021-45046']);
    const log4shell = kev.find((f) => f.vulnerabilityId === 'CVE-2021-44228') as Json;
    expect(log4shell).toMatchObject({
      assetId: INSTANCE,
      knownExploit: { cveID: 'CVE-2021-44228', vendorProject: 'Apache', product: 'Log4j2', dateAdded: '2021-12-10' },
      hasExploit: true,
      // Exploits in the order of their EDB ids.
      exploits: [
        { id: '50590', source: 'Exploit-DB', sourceUrl: 'https://www.exploit-db.com/exploits/50590' },
        { id: '50592', source: 'Exploit-DB', title: 'Apache Log4j 2 - Remote Code Execution (RCE)' },
      ],
    });
    const instance = (await api(`/v1/tenant/assets/${encodeURIComponent(INSTANCE)}`)).data as Json;
    expect(instance).toMatchObject({ hasKev: true, hasExploit: true });
  });

  it('VEX statements became exemptions on the matching image', async () => {
    const exempted = await all('/v1/tenant/vulnerabilities?isExempted=true');
    expect(exempted.map((f) => f.vulnerabilityId).sort()).toEqual(['CVE-2021-42374', 'CVE-2022-48174']);
  });

  it('the same ingest again changes nothing', async () => {
    const before = await all('/v1/tenant/vulnerabilities?sortBy=firstObservedAt');
    const assetsBefore = await all('/v1/tenant/assets');
    const run = await cli(
      'ingest',
      '--tenant',
      tenant,
      '--provider',
      'AWS',
      '--region',
      'us-east-1',
      sample('trivy/trivy-image-teamdojo-multi-target.json'),
    );
    expect(run.stderr).toMatch(/asset \S+ unchanged, findings 0 added, 0 updated, 5 unchanged, 0 resolved/);
    expect(await all('/v1/tenant/vulnerabilities?sortBy=firstObservedAt')).toEqual(before);
    expect(await all('/v1/tenant/assets')).toEqual(assetsBefore);
  });

  it('an older report of the same image resolves what it no longer lists', async () => {
    const report = JSON.parse(readFileSync(sample('trivy/trivy-image-teamdojo-multi-target.json'), 'utf8')) as {
      Results: { Vulnerabilities?: { VulnerabilityID: string }[] }[];
    };
    for (const result of report.Results)
      result.Vulnerabilities = result.Vulnerabilities?.filter((v) => v.VulnerabilityID !== 'CVE-2020-15999');
    const older = join(dir, 'older.json');
    writeFileSync(older, JSON.stringify(report));
    const run = await cli('ingest', '--tenant', tenant, '--provider', 'AWS', '--region', 'us-east-1', older);
    expect(run.stderr).toContain('findings 0 added, 4 updated, 0 unchanged, 1 resolved');
    const kev = await all('/v1/tenant/vulnerabilities?hasKev=true');
    expect(kev.map((f) => f.vulnerabilityId).sort()).toEqual(['CVE-2021-44228', 'CVE-2021-45046']);
  });
});
