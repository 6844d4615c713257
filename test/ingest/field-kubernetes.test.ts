// Kubernetes reports from the field on a real database of each dialect: `trivy k8s --report summary` (its `Findings[]`
// layout), trivy-operator's ConfigAuditReport and ExposedSecretReport (DefectDojo's samples) and a bare array of the
// operator's reports; layouts and kinds that are not read are refused by name, writing nothing.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { TENANT_A } from '../helpers.js';
import { ingestSuite } from './suite.js';

const read = (path: string): string => readFileSync(new URL(`../fixtures/${path}`, import.meta.url), 'utf8');
const SUMMARY = read('ingest/trivy-k8s/scan2html-k8s-results_k8s_cluster_summary.json');
const CONFIG_AUDIT = read('ingest/trivy-k8s/dd-trivy_operator-configauditreport_single_vuln.json');
const SECRETS = read('ingest/trivy-k8s/dd-trivy_operator-exposedsecretreport_single_vuln.json');
const ARRAY = read('ingest-own/trivy-operator-reports-array.json');
type Json = Record<string, unknown>;

const suite = ingestSuite();
const { ingest, api } = suite;
const id = (type: string, resource: string) =>
  `sirn:assets:${TENANT_A}:kubernetes:${type.toLowerCase().split('::').slice(1).join(':')}:global:${resource}`;
const asset = async (assetId: string): Promise<Json> =>
  (await api(`/v1/tenant/assets/${encodeURIComponent(assetId)}`)).data as Json;
const findingIds = async (assetId: string): Promise<string[]> =>
  ((await api(`/v1/tenant/vulnerabilities?assetIds=${encodeURIComponent(assetId)}&perPage=500`)).data as Json[])
    .map((f) => String(f.vulnerabilityId))
    .sort();
/** The riskTypeId of every risk whose primary asset is the asset, through every batch of the list. */
async function risksOf(assetId: string): Promise<string[]> {
  const types: string[] = [];
  let cursor: string | null = null;
  do {
    const page = await api(`/v1/tenant/risks?perPage=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    for (const r of page.data as Json[]) if (r.primaryAssetId === assetId) types.push(String(r.riskTypeId));
    cursor = (page.meta as { cursor: string | null }).cursor;
  } while (cursor !== null);
  return types.sort();
}

describe('trivy k8s --report summary (the Findings[] layout)', () => {
  const PROXY = id('Kubernetes::Apps::DaemonSet', 'minikube/kube-system/DaemonSet/kube-proxy');

  it('makes one asset per resource with its findings and failed checks', async () => {
    const result = await ingest({ 'summary.json': SUMMARY });
    expect(result.problems).toEqual([]);
    expect(result.files[0]).toMatchObject({
      format: 'trivy-k8s',
      assets: 200,
      assetsCreated: 200,
      added: 56,
      checksFailed: 167,
      checksAdded: 167,
      warnings: [],
    });
    expect(await asset(PROXY)).toMatchObject({ name: 'kube-system/kube-proxy', type: 'Kubernetes::Apps::DaemonSet' });
    expect(await findingIds(PROXY)).toHaveLength(33);
    const checks = await suite.checks(TENANT_A, PROXY);
    expect(checks.map((c) => [c.checkId, c.source])).toEqual(
      [
        'KSV001',
        'KSV003',
        'KSV009',
        'KSV011',
        'KSV012',
        'KSV014',
        'KSV015',
        'KSV016',
        'KSV017',
        'KSV018',
        'KSV020',
        'KSV021',
        'KSV023',
        'KSV030',
        'KSV104',
        'KSV106',
      ].map((c) => [c, 'trivy']),
    );
    const role = id('Kubernetes::Rbac::ClusterRole', 'minikube/-/ClusterRole/system:controller:namespace-controller');
    expect((await suite.checks(TENANT_A, role)).map((c) => [c.checkId, c.doc.severity])).toEqual([
      ['KSV046', 'CRITICAL'],
    ]);
  });

  it('a layout with entries under a key it does not read is refused by that key, writing nothing', async () => {
    const report = JSON.stringify({ ClusterName: 'other', Infra: [{ Kind: 'Node', Name: 'n1', Results: [] }] });
    const result = await ingest({ 'other.json': report });
    expect(result.problems).toEqual([
      {
        file: 'other.json',
        path: '$.Infra',
        message:
          'holds 1 entries in a layout secinv does not read (it reads Resources, Findings, Vulnerabilities, Misconfigurations): nothing of this report was written',
      },
    ]);
  });
});

describe("trivy-operator's ConfigAuditReport and ExposedSecretReport", () => {
  const NGINX = id('Kubernetes::Apps::ReplicaSet', 'prod/default/ReplicaSet/nginx-deployment-965685897');
  const SECRET = id('Kubernetes::Apps::ReplicaSet', 'prod/default/ReplicaSet/nginx-deployment-c868466d4');

  it('a failed check is a risk on the workload, as a Trivy misconfiguration', async () => {
    const result = await ingest({ 'audit.json': CONFIG_AUDIT }, { cluster: 'prod' });
    expect(result.problems).toEqual([]);
    expect(result.files[0]).toMatchObject({ format: 'trivy-operator', assetId: NGINX, assetCreated: true, added: 0 });
    const [check, ...more] = await suite.checks(TENANT_A, NGINX);
    expect(more).toEqual([]);
    expect(check?.doc).toEqual({
      checkId: 'KSV014',
      source: 'trivy-operator',
      title: 'Root file system is not read-only',
      description: expect.stringMatching(/^An immutable root file system prevents applications/),
      severity: 'LOW',
      remediation: null,
      references: [],
      detail:
        "Container 'nginx' of ReplicaSet 'nginx-deployment-965685897' should set 'securityContext.readOnlyRootFilesystem' to true",
    });
    expect(check?.firstObservedAt).toBe('2023-03-23T16:22:54.000Z');
    expect(await risksOf(NGINX)).toEqual(['KSV014']);
  });

  it("a secret fills the workload's secrets", async () => {
    const result = await ingest({ 'secrets.json': SECRETS }, { cluster: 'prod' });
    expect(result.problems).toEqual([]);
    expect(await asset(SECRET)).toMatchObject({
      numberOfCriticalSecrets: 1,
      numberOfHighSecrets: 0,
      criticalSecrets: [
        {
          ruleId: 'aws-secret-access-key',
          category: 'AWS',
          title: 'AWS Secret Access Key',
          target: 'root/aws_secret.txt',
          startLine: null,
          endLine: null,
          source: 'trivy-operator',
        },
      ],
    });
  });
});

describe('a bare JSON array of trivy-operator reports', () => {
  const WEB = id('Kubernetes::Apps::ReplicaSet', 'prod/shop/ReplicaSet/web-5d8f7c9b4');
  const reports = JSON.parse(ARRAY) as Json[];

  it("is read as a List: one workload's findings, checks and secrets on one asset", async () => {
    const result = await ingest({ 'reports.json': ARRAY }, { cluster: 'prod' });
    expect(result.problems).toEqual([]);
    expect(result.files[0]).toMatchObject({ assetId: WEB, added: 1, checksFailed: 1, checksAdded: 1 });
    expect(await findingIds(WEB)).toEqual(['CVE-2023-5678']);
    expect((await suite.checks(TENANT_A, WEB)).map((c) => c.checkId)).toEqual(['KSV012']);
    expect(await asset(WEB)).toMatchObject({
      numberOfHighSecrets: 1,
      highSecrets: [expect.objectContaining({ ruleId: 'github-pat' })],
    });
  });

  it('a later ConfigAuditReport alone leaves the findings and secrets; its passing check resolves the failure', async () => {
    const audit = reports[1] as { report: { updateTimestamp: string; checks: Json[] } };
    audit.report.updateTimestamp = '2026-10-21T08:00:00Z';
    audit.report.checks = audit.report.checks.map((c) => ({ ...c, success: true }));
    const result = await ingest({ 'audit.json': JSON.stringify(audit) }, { cluster: 'prod' });
    expect(result.problems).toEqual([]);
    expect(result.files[0]).toMatchObject({ assetId: WEB, resolved: 0, checksFailed: 0, checksResolved: 1 });
    expect(await findingIds(WEB)).toEqual(['CVE-2023-5678']);
    expect(await suite.checks(TENANT_A, WEB)).toEqual([]);
    expect(await asset(WEB)).toMatchObject({ numberOfHighSecrets: 1 });
  });

  it('SbomReport and ClusterComplianceReport are refused by name, writing nothing', async () => {
    const kind = (k: string) => ({ ...(reports[0] as Json), kind: k });
    const result = await ingest(
      { 'mixed.json': JSON.stringify([kind('SbomReport'), reports[0], kind('ClusterComplianceReport')]) },
      { cluster: 'prod' },
    );
    const read = 'secinv reads VulnerabilityReport, ConfigAuditReport and ExposedSecretReport';
    expect(result.problems).toEqual([
      {
        file: 'mixed.json',
        path: '$[0].kind',
        message: `is a trivy-operator SbomReport (packages without vulnerabilities), which is not read: ${read}`,
      },
      {
        file: 'mixed.json',
        path: '$[2].kind',
        message: `is a trivy-operator ClusterComplianceReport (a compliance summary, no findings), which is not read: ${read}`,
      },
    ]);
    const alone = await ingest(
      {
        'sbom.json': JSON.stringify({ apiVersion: 'aquasecurity.github.io/v1alpha1', kind: 'SbomReport', report: {} }),
      },
      { cluster: 'prod' },
    );
    expect(alone.problems).toEqual([
      {
        file: 'sbom.json',
        path: null,
        message: `is a trivy-operator SbomReport (packages without vulnerabilities), which is not read: ${read}`,
      },
    ]);
  });
});
