// Prowler OCSF JSON into the inventory, on a real database of each dialect: every resource uid becomes an asset of its
// cloud, failed checks are stored per asset (table `checks`), a later pass resolves a failure, the same file again
// changes nothing, and bad or other Prowler output is refused with its reason and nothing written.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { IngestResult } from '../../src/ingest/ingest.js';
import { TENANT_A, TENANT_B } from '../helpers.js';
import { checkKeys } from './checks.js';
import { ingestSuite } from './suite.js';

const sample = (name: string): string =>
  readFileSync(new URL(`../fixtures/ingest/assets/${name}`, import.meta.url), 'utf8');
const AWS_ONE = sample('prowler-v3-ocsf-aws-one.json');
const AZURE = sample('prowler-ocsf-azure.json');
const KUBERNETES = sample('prowler-ocsf-kubernetes.json');
const CSV = sample('prowler-csv-aws.csv');
const RESCAN = readFileSync(new URL('../fixtures/ingest-own/prowler-ocsf-aws-rescan.json', import.meta.url), 'utf8');

type Json = Record<string, unknown>;

const { ingest, api, checks, etag } = ingestSuite();
const asset = async (id: string, tenantId = TENANT_A) =>
  (await api(`/v1/tenant/assets/${encodeURIComponent(id)}?include=rawData`, tenantId)).data as Json;
const summary = (result: IngestResult, file: string) => {
  expect(result.problems).toEqual([]);
  return result.files.find((f) => f.file === file);
};

const A = `sirn:assets:${TENANT_A}`;
const ROLE_ARN = 'arn:aws:iam::123456789012:role/myAdministratorExecutionRole';
const ROLE = `${A}:aws:iam:role:us-east-1:${ROLE_ARN}`;
const APP_INSIGHTS = `${A}:azure:insights:component:global:AppInsights`;
const ROLE_CHECK = 'iam_role_administratoraccess_policy_permissive_trust_relationship';
const BUCKET = `${A}:aws:s3:bucket:eu-west-1:arn:aws:s3:::billing-exports`;
const SECURITY_GROUP = `${A}:aws:ec2:securitygroup:us-west-2:arn:aws:ec2:us-west-2:123456789012:security-group/sg-0a1b2c3d`;
const ANALYZER = `${A}:aws:accessanalyzer:other:us-east-1:arn:aws:accessanalyzer:us-east-1:123456789012:analyzer/unknown`;

describe('the Prowler samples', () => {
  it('each resource uid becomes an asset of its cloud, with its failed checks', async () => {
    const result = await ingest({ 'aws.json': AWS_ONE, 'azure.json': AZURE, 'k8s.json': KUBERNETES });
    expect(summary(result, 'aws.json')).toMatchObject({
      format: 'prowler-ocsf',
      assetId: ROLE,
      assetCreated: true,
      added: 0,
      checksFailed: 1,
      checksAdded: 1,
      checksResolved: 0,
      warnings: [],
    });
    // Two of the three Azure findings are on the same (redacted) resource uid.
    expect(summary(result, 'azure.json')).toMatchObject({
      assetId: null,
      assets: 2,
      assetsCreated: 2,
      checksFailed: 3,
    });
    // Four findings, one check reported twice on the same pod: three failures.
    const k8s = summary(result, 'k8s.json');
    expect(k8s).toMatchObject({ assets: 1, checksFailed: 3, checksAdded: 3 });
    const pod = String(k8s?.assetId);
    expect(pod).toMatch(new RegExp(`^${A}:kubernetes:core:pod:global:_resource_uid_~[0-9a-f]{12}$`));

    expect(await asset(ROLE)).toMatchObject({
      provider: 'AWS',
      type: 'AWS::IAM::Role',
      service: 'AWS::IAM',
      resourceType: 'AWS::IAM::Role',
      region: 'us-east-1',
      name: 'myAdministratorExecutionRole',
      resourceName: 'myAdministratorExecutionRole',
      resourceId: ROLE_ARN,
      providerAccountId: 123456789012,
      lastScannedAt: '2024-06-03T14:15:19.382Z',
      firstObservedAt: '2024-06-03T14:15:19.382Z',
      tags: [],
      rawData: {
        scanner: 'prowler',
        resourceType: 'AwsIamRole',
        service: 'iam',
        data: { details: '' },
        account: { uid: '123456789012', type: 'AWS_Account' },
        secinvScans: { prowler: { scannedAt: '2024-06-03T14:15:19.382Z' } },
      },
    });
    expect(await asset(APP_INSIGHTS)).toMatchObject({
      provider: 'Azure',
      type: 'Azure::Insights::Component',
      region: 'global',
      name: 'AppInsights',
      // A subscription id is not a number.
      providerAccountId: null,
      rawData: {
        account: { uid: '<subscription_uid>' },
        organization: { uid: '<tenant_uid>', name: '<organization_name>' },
      },
    });
    expect(await asset(pod)).toMatchObject({
      provider: 'Kubernetes',
      type: 'Kubernetes::Core::Pod',
      region: null,
      name: '<pod>',
      resourceId: '<resource_uid>',
      providerAccountId: null,
      rawData: { resourceType: 'KubernetesAPIServer', namespace: '<namespace>', account: null, organization: null },
    });

    const stored = await checks();
    const azureOther = stored.find((c) => c.checkId === 'defender_additional_email_configured_with_a_security_contact');
    expect(stored.map((c) => [c.assetId, c.source, c.checkId, c.severityLevelValue, c.firstObservedAt])).toEqual(
      [
        [APP_INSIGHTS, 'prowler', 'appinsights_ensure_is_configured', 2, '2025-02-14T13:27:30.000Z'],
        [
          azureOther?.assetId,
          'prowler',
          'defender_additional_email_configured_with_a_security_contact',
          3,
          '2025-02-14T13:27:30.000Z',
        ],
        [
          azureOther?.assetId,
          'prowler',
          'defender_ensure_defender_for_app_services_is_on',
          4,
          '2025-02-14T13:27:30.000Z',
        ],
        [pod, 'prowler', 'apiserver_always_pull_images_plugin', 3, '2025-02-14T13:27:38.000Z'],
        [pod, 'prowler', 'apiserver_audit_log_maxage_set', 3, '2025-02-14T13:27:38.000Z'],
        [pod, 'prowler', 'apiserver_audit_log_maxbackup_set', 3, '2025-02-14T13:27:38.000Z'],
        [ROLE, 'prowler', ROLE_CHECK, 4, '2024-06-03T14:15:19.382Z'],
      ].sort((a, b) => `${String(a[0])} ${String(a[2])}`.localeCompare(`${String(b[0])} ${String(b[2])}`)),
    );
    expect(azureOther?.assetId).toBe(`${A}:azure:security:securitycontact:global:${pod.split(':').pop()}`);

    expect(stored.find((c) => c.checkId === ROLE_CHECK)?.doc).toEqual({
      checkId: ROLE_CHECK,
      source: 'prowler',
      title: 'Ensure IAM Roles with attached AdministratorAccess policy have a well defined trust relationship',
      description: expect.stringMatching(
        /^Ensure IAM Roles with attached AdministratorAccess policy have a well defined trust relationship\n\nThe AWS-managed AdministratorAccess policy grants all actions/,
      ),
      severity: 'HIGH',
      remediation: expect.stringMatching(/^Apply the principle of least privilege\. Instead of AdministratorAccess/),
      references: [
        'https://docs.aws.amazon.com/IAM/latest/UserGuide/best-practices.html#grant-least-privilege',
        'https://docs.aws.amazon.com/IAM/latest/UserGuide/access_policies_job-functions.html#jf_administrator',
      ],
      detail:
        'IAM Role myAdministratorExecutionRole has AdministratorAccess policy attached that has too permissive trust relationship.',
    });
    // A command among the references is a remediation step, not a link.
    const appInsights = stored.find((c) => c.checkId === 'appinsights_ensure_is_configured')?.doc;
    expect(appInsights?.references).toEqual([
      'https://www.tenable.com/audits/items/CIS_Microsoft_Azure_Foundations_v2.0.0_L2.audit:8a7a608d180042689ad9d3f16aa359f1',
      'https://learn.microsoft.com/en-us/azure/azure-monitor/app/app-insights-overview',
    ]);
    expect(appInsights?.remediation).toMatch(
      /^1\. Navigate to Application Insights .*\naz monitor app-insights component create /s,
    );
    expect(appInsights).toMatchObject({
      severity: 'LOW',
      detail: 'There are no AppInsight configured in subscription <subscription_name>.',
    });
  });

  it('the same files again change nothing', async () => {
    const before = {
      checks: await checks(),
      role: await asset(ROLE),
      pod: await api('/v1/tenant/assets?providers=Kubernetes,Azure&perPage=100'),
    };
    const tag = await etag('/v1/tenant/assets');
    const again = await ingest({ 'aws.json': AWS_ONE, 'azure.json': AZURE, 'k8s.json': KUBERNETES });
    expect(again.problems).toEqual([]);
    for (const file of again.files)
      expect(file).toMatchObject({ assetsCreated: 0, assetsUnchanged: file.assets, checksAdded: 0, checksResolved: 0 });
    // Nothing was written: the tenant's data version did not move.
    expect(await etag('/v1/tenant/assets')).toBe(tag);
    expect(await checks()).toEqual(before.checks);
    expect(await asset(ROLE)).toEqual(before.role);
    expect(await api('/v1/tenant/assets?providers=Kubernetes,Azure&perPage=100')).toEqual(before.pod);
  });
});

describe('a later Prowler run', () => {
  it('into another tenant is written there only', async () => {
    const result = await ingest({ 'aws.json': AWS_ONE }, { tenantId: TENANT_B });
    expect(summary(result, 'aws.json')).toMatchObject({ assetCreated: true, checksFailed: 1 });
    expect(checkKeys(await checks(TENANT_B))).toEqual([
      `sirn:assets:${TENANT_B}:aws:iam:role:us-east-1:${ROLE_ARN} ${ROLE_CHECK}`,
    ]);
    expect(await checks(TENANT_A, ROLE)).toHaveLength(1);
  });

  it('resolves a failure whose check now passes; duplicates are one failure; MANUAL makes the asset only', async () => {
    const tenantB = await checks(TENANT_B);
    const result = await ingest({ 'rescan.json': RESCAN });
    expect(summary(result, 'rescan.json')).toMatchObject({
      assets: 4,
      assetsCreated: 3,
      checksFailed: 3,
      checksAdded: 3,
      checksResolved: 1,
      warnings: ['2 findings without a resource uid were skipped'],
    });
    expect(await checks(TENANT_A, ROLE)).toEqual([]);
    // The pass in tenant A resolves nothing in tenant B.
    expect(await checks(TENANT_B)).toEqual(tenantB);

    const bucket = await checks(TENANT_A, BUCKET);
    expect(bucket.map((c) => [c.checkId, c.doc.severity, c.firstObservedAt])).toEqual([
      // The bucket was scanned when its latest finding was made.
      ['s3_bucket_object_versioning', 'INFORMATIONAL', '2024-06-10T08:00:01.750Z'],
      ['s3_bucket_public_access', 'CRITICAL', '2024-06-10T08:00:01.750Z'],
    ]);
    expect(bucket[1]?.doc).toMatchObject({
      description:
        'Ensure there are no S3 buckets open to Everyone or Any AWS user.\n\nPublic buckets expose their objects to anyone on the internet.',
      remediation:
        'Block public access at the bucket and account level.\naws s3api put-public-access-block --bucket billing-exports --public-access-block-configuration BlockPublicAcls=true',
      references: ['https://docs.aws.amazon.com/AmazonS3/latest/userguide/access-control-block-public-access.html'],
    });
    expect(await asset(BUCKET)).toMatchObject({
      type: 'AWS::S3::Bucket',
      region: 'eu-west-1',
      tags: [
        { Key: 'team', Value: 'billing' },
        { Key: 'cost-center', Value: '' },
      ],
      rawData: { labels: ['owner:platform'], data: { metadata: { name: 'billing-exports', public: true } } },
    });
    // The resource's region wins over the finding's cloud region; a MANUAL finding stores no check.
    expect(await asset(SECURITY_GROUP)).toMatchObject({ type: 'AWS::EC2::SecurityGroup', region: 'us-west-2' });
    expect(await checks(TENANT_A, SECURITY_GROUP)).toEqual([]);
    // An unknown type is named from its service; an empty resource region falls back to the cloud's.
    expect(await asset(ANALYZER)).toMatchObject({
      type: 'AWS::Accessanalyzer::Other',
      service: 'AWS::Accessanalyzer',
      region: 'us-east-1',
    });
    expect(checkKeys(await checks(TENANT_A, ANALYZER))).toEqual([`${ANALYZER} accessanalyzer_enabled`]);
  });

  it('with --no-resolve leaves a failure whose check passes', async () => {
    await ingest({ 'aws.json': AWS_ONE });
    expect(checkKeys(await checks(TENANT_A, ROLE))).toEqual([`${ROLE} ${ROLE_CHECK}`]);
    const result = await ingest({ 'rescan.json': RESCAN }, { resolve: false });
    expect(summary(result, 'rescan.json')).toMatchObject({ checksResolved: 0, checksAdded: 0, checksFailed: 3 });
    expect(checkKeys(await checks(TENANT_A, ROLE))).toEqual([`${ROLE} ${ROLE_CHECK}`]);
    expect(summary(await ingest({ 'rescan.json': RESCAN }), 'rescan.json')).toMatchObject({ checksResolved: 1 });
  });

  it('names a Kubernetes resource in --region when the report does not', async () => {
    const moved = (JSON.parse(KUBERNETES) as Json[]).map((f) => ({
      ...f,
      resources: (f.resources as Json[]).map((r) => ({ ...r, uid: 'a3c1f9e2-pod-uid' })),
    }));
    const result = await ingest({ 'k8s.json': JSON.stringify(moved) }, { region: 'eu-west-1' });
    const id = `${A}:kubernetes:core:pod:eu-west-1:a3c1f9e2-pod-uid`;
    expect(summary(result, 'k8s.json')).toMatchObject({ assetId: id, checksFailed: 3 });
    expect(await asset(id)).toMatchObject({ region: 'eu-west-1', name: '<pod>' });
  });

  it('reads a time without zone as UTC when a finding has no epoch seconds, and an empty array as no findings', async () => {
    const [first] = JSON.parse(AZURE) as Json[];
    const { time: _time, finding_info: info, ...rest } = first as Json;
    const { created_time: _created, ...infoRest } = info as Json;
    const resource = { ...((rest.resources as Json[])[0] as Json), uid: 'AppInsights2' };
    const result = await ingest({
      'dt.json': JSON.stringify([{ ...rest, finding_info: infoRest, resources: [resource] }]),
    });
    const id = `${A}:azure:insights:component:global:AppInsights2`;
    expect(summary(result, 'dt.json')).toMatchObject({ assetId: id });
    expect((await checks(TENANT_A, id))[0]?.firstObservedAt).toBe('2025-02-14T14:27:30.710Z');
    const empty = await ingest({ 'empty.json': '[]' }, { format: 'prowler-ocsf' });
    expect(summary(empty, 'empty.json')).toMatchObject({
      assets: 0,
      checksFailed: 0,
      warnings: [
        'an empty Prowler OCSF report (no findings): it names no account, resource or check, so it adds and resolves nothing',
      ],
    });
  });
});

describe('other Prowler output and bad input', () => {
  const OLD_JSON = JSON.stringify([
    { AssessmentStartTime: '2023-01-01T00:00:00Z', CheckID: 'iam_root_mfa_enabled', Status: 'FAIL' },
  ]);

  it('Prowler CSV and the older JSON ask for OCSF, with or without --format', async () => {
    const count = await checks();
    for (const format of ['auto', 'prowler-ocsf'] as const) {
      const result = await ingest({ 'prowler.csv': CSV, 'old.json': OLD_JSON, 'aws.json': RESCAN }, { format });
      expect(result.problems.map((p) => `${p.file}: ${p.message}`)).toEqual([
        'prowler.csv: is Prowler CSV output, which is not supported: run prowler with `--output-formats json-ocsf`',
        "old.json: is Prowler's older JSON output, which is not supported: run prowler with `--output-formats json-ocsf`",
      ]);
    }
    expect(await checks()).toEqual(count);
  });

  it('a finding that is not one, a cloud secinv does not have, or a failure without check id is named by its path', async () => {
    const [finding] = JSON.parse(AWS_ONE) as Json[];
    const m365 = { ...finding, cloud: { ...(finding?.cloud as Json), provider: 'm365' } };
    const noCode = { ...finding, metadata: { product: { name: 'Prowler' } } };
    const result = await ingest({
      'bad.json': JSON.stringify([finding, { ...finding, class_uid: 2001 }, m365, m365, noCode, 7]),
      'cut.json': AWS_ONE.slice(0, 600),
    });
    expect(result.problems.map((p) => `${p.file}: ${p.path ?? ''} ${p.message}`)).toEqual([
      'bad.json: $[1].class_uid must be 2004 (an OCSF Detection Finding)',
      "bad.json: $[2].cloud.provider is 'm365', a cloud secinv does not inventory (aws, azure, gcp, kubernetes)",
      'bad.json: $[4].metadata.event_code is required (the check id, a non-empty string)',
      'bad.json: $[5] must be an object (an OCSF Detection Finding)',
      expect.stringMatching(/^cut\.json: +ends before the JSON is complete \(truncated\?\), inside \$\[0\]/),
    ]);
  });
});
