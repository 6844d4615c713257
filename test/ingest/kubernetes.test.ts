// Trivy Kubernetes reports (both layouts) and trivy-operator VulnerabilityReports on a real database of each dialect:
// every resource is a Kubernetes asset named by cluster, namespace, kind and name; findings carry the workload's image
// or container as their packages' target.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IngestOptions, IngestResult } from '../../src/ingest/ingest.js';
import { fixture } from '../fixtures.js';
import { setupWithKeys, TENANT_A, type TestContext } from '../helpers.js';
import { ingestTexts } from './run.js';

const sample = (path: string): string => readFileSync(new URL(`../fixtures/ingest/${path}`, import.meta.url), 'utf8');
const own = (name: string): string => readFileSync(new URL(`../fixtures/ingest-own/${name}`, import.meta.url), 'utf8');
const MINIKUBE = sample('trivy-k8s/trivy-k8s-minikube-resources.json');
const OPERATOR = sample('trivy-k8s/trivy-operator-vulnreport-many.json');
type Json = Record<string, unknown>;

let ctx: TestContext;
let key: string;
beforeAll(async () => {
  ({
    ctx,
    keys: [key],
  } = await setupWithKeys(fixture, [TENANT_A]));
});
afterAll(async () => ctx.close());

const ingest = (files: Record<string, string>, options: Partial<IngestOptions> = {}): Promise<IngestResult> =>
  ingestTexts(ctx.storage, files, options);
async function api(path: string): Promise<Json> {
  const res = await ctx.app.inject({ url: path, headers: { authorization: `Bearer ${key}` } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<Json>();
}
const k8sAssets = async (): Promise<Json[]> =>
  (await api('/v1/tenant/assets?providers=Kubernetes&perPage=100')).data as Json[];
const id = (type: string, resource: string) =>
  `sirn:assets:${TENANT_A}:kubernetes:${type.toLowerCase().split('::').slice(1).join(':')}:global:${resource}`;

describe('a Trivy Kubernetes report (current layout)', () => {
  it('makes one asset per resource, named by the Resource, never by a Result target', async () => {
    const result = await ingest({ 'minikube.json': MINIKUBE });
    expect(result.problems).toEqual([]);
    expect(result.files[0]).toMatchObject({ format: 'trivy-k8s', assetId: null, assets: 13, assetsCreated: 13 });
    const assets = await k8sAssets();
    const role = assets.find((a) => a.id === id('Kubernetes::Rbac::Role', 'minikube/default/Role/caas-scanners-role'));
    expect(role).toMatchObject({
      provider: 'Kubernetes',
      type: 'Kubernetes::Rbac::Role',
      service: 'Kubernetes::Rbac',
      name: 'default/caas-scanners-role',
      region: null,
    });
    const detail = (await api(`/v1/tenant/assets/${encodeURIComponent(String(role?.id))}?include=rawData`))
      .data as Json;
    expect(detail.rawData).toMatchObject({
      cluster: 'minikube',
      namespace: 'default',
      kind: 'Role',
      name: 'caas-scanners-role',
    });
    expect(assets.some((a) => String(a.id).includes('Deployment/httpbin'))).toBe(false);
    expect(assets.map((a) => a.type)).toEqual(
      expect.arrayContaining([
        'Kubernetes::Core::Service',
        'Kubernetes::Core::ServiceAccount',
        'Kubernetes::Core::ConfigMap',
        'Kubernetes::Apps::StatefulSet',
      ]),
    );
  });

  it('the same report again changes nothing', async () => {
    const before = await k8sAssets();
    const tag = (await ctx.app.inject({ url: '/v1/tenant/assets', headers: { authorization: `Bearer ${key}` } }))
      .headers.etag;
    const again = await ingest({ 'minikube.json': MINIKUBE });
    expect(again.files[0]).toMatchObject({
      assets: 13,
      assetsCreated: 0,
      assetsUnchanged: 13,
      added: 0,
      updated: 0,
      resolved: 0,
    });
    expect(await k8sAssets()).toEqual(before);
    // Nothing was written: the tenant's data version, and so the tags its clients hold, did not move.
    const after = await ctx.app.inject({ url: '/v1/tenant/assets', headers: { authorization: `Bearer ${key}` } });
    expect(after.headers.etag).toBe(tag);
  });

  it('--asset does not apply to it', async () => {
    const result = await ingest(
      { 'minikube.json': MINIKUBE },
      { assetId: 'sirn:assets:u1:aws:ec2:instance:us-east-1:i-001' },
    );
    expect(result.problems.map((p) => p.message)).toEqual([
      'this report names its own assets (one per resource): --asset does not apply to it',
    ]);
  });
});

describe('a Trivy Kubernetes report (older layout)', () => {
  it('reads both lists, one asset per resource, packages merged, a cluster-scoped resource without namespace', async () => {
    const result = await ingest({ 'old.json': own('trivy-k8s-old-layout.json') }, { region: 'eu-west-1' });
    expect(result.problems).toEqual([]);
    expect(result.files[0]).toMatchObject({ assets: 2, added: 1 });
    const deployment = `sirn:assets:${TENANT_A}:kubernetes:apps:deployment:eu-west-1:prod-eu/payments/Deployment/api`;
    const findings = (await api(`/v1/tenant/vulnerabilities?assetIds=${encodeURIComponent(deployment)}`))
      .data as Json[];
    expect(findings).toHaveLength(1);
    expect(findings[0]).toMatchObject({
      vulnerabilityId: 'CVE-2023-5363',
      assetType: 'Kubernetes::Apps::Deployment',
      provider: 'Kubernetes',
      isExploitable: true,
      packages: [
        { packageName: 'libcrypto3', targetName: 'registry.example.com/payments/api:1.4.2 (alpine 3.18.4)' },
        { packageName: 'libssl3' },
      ],
    });
    const node = (
      await api(
        `/v1/tenant/assets/${encodeURIComponent(`sirn:assets:${TENANT_A}:kubernetes:core:node:eu-west-1:prod-eu/-/Node/ip-10-0-1-17`)}`,
      )
    ).data as Json;
    expect(node).toMatchObject({ name: 'ip-10-0-1-17', region: 'eu-west-1' });
  });
});

describe('a trivy-operator VulnerabilityReport', () => {
  it('names no cluster: --cluster is asked for, and nothing is written', async () => {
    const result = await ingest({ 'operator.json': OPERATOR });
    expect(result.problems.map((p) => `${p.file}: ${p.message}`)).toEqual([
      'operator.json: this report names no cluster: give --cluster NAME',
    ]);
  });

  it('becomes findings on the workload its labels name, with the container as target and the operator severity', async () => {
    const result = await ingest({ 'operator.json': OPERATOR }, { cluster: 'minikube' });
    expect(result.problems).toEqual([]);
    const workload = id('Kubernetes::Apps::ReplicaSet', 'minikube/default/ReplicaSet/nginx-deployment-965685897');
    expect(result.files[0]).toMatchObject({ format: 'trivy-operator', assetId: workload, assetCreated: true });
    const findings = (await api(`/v1/tenant/vulnerabilities?assetIds=${encodeURIComponent(workload)}&perPage=100`))
      .data as Json[];
    // 41 rows, one finding per vulnerability id.
    expect(findings).toHaveLength(31);
    expect(findings.find((f) => f.vulnerabilityId === 'CVE-2023-23914')).toMatchObject({
      severityLevel: 'CRITICAL',
      severitySource: 'trivy-operator',
      title: 'curl: HSTS ignored on multiple requests',
      primaryUrl: 'https://avd.aquasec.com/nvd/cve-2023-23914',
      firstObservedAt: '2023-03-23T16:23:01.000Z',
      isExploitable: false,
      packages: [
        {
          packageName: 'curl',
          installedVersion: '7.87.0-r1',
          fixedVersion: '7.87.0-r2',
          targetName: 'nginx',
          targetClass: 'os-pkgs',
        },
        { packageName: 'libcurl', installedVersion: '7.87.0-r1', targetName: 'nginx' },
      ],
    });
    const asset = (await api(`/v1/tenant/assets/${encodeURIComponent(workload)}?include=rawData`)).data as Json;
    expect(asset).toMatchObject({
      lastScannedAt: '2023-03-23T16:23:01.000Z',
      rawData: { registry: { server: 'index.docker.io' }, artifact: { repository: 'library/nginx', tag: 'alpine' } },
    });
  });
});
