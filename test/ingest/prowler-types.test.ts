// Prowler's resource types and times, as the Prowler reader names and reads them (docs/INGEST.md, "Prowler OCSF").
import { describe, expect, it } from 'vitest';
import { epochOrUtcTimestamp, prowlerResourceType } from '../../src/ingest/prowler.js';

describe('prowlerResourceType', () => {
  it.each([
    ['AWS', 'AwsIamRole', 'iam', 'AWS::IAM::Role'],
    ['AWS', 'AwsS3Bucket', 's3', 'AWS::S3::Bucket'],
    ['AWS', 'AwsRdsDbInstance', 'rds', 'AWS::RDS::DBInstance'],
    ['Azure', 'Microsoft.Insights/components', 'appinsights', 'Azure::Insights::Component'],
    ['Azure', 'Microsoft.Storage/storageAccounts', 'storage', 'Azure::Storage::StorageAccount'],
    ['Azure', 'Microsoft.Network/publicIPAddresses', 'network', 'Azure::Network::PublicIPAddress'],
    ['Azure', 'Microsoft.Authorization/policies', 'policy', 'Azure::Authorization::Policy'],
    ['Azure', 'AzureDefenderPlan', 'defender', 'Azure::Security::Pricing'],
    ['Kubernetes', 'KubernetesAPIServer', 'apiserver', 'Kubernetes::Core::Pod'],
    // A Kubernetes kind is named by its API group, whatever Prowler service checked it.
    ['Kubernetes', 'Pod', 'rbac', 'Kubernetes::Core::Pod'],
    ['Kubernetes', 'ClusterRoleBinding', 'rbac', 'Kubernetes::Rbac::ClusterRoleBinding'],
    ['AWS', 'Other', 'accessanalyzer', 'AWS::Accessanalyzer::Other'],
    ['GCP', 'storage.googleapis.com/Bucket', 'cloudstorage', 'GCP::Cloudstorage::storagegoogleapiscomBucket'],
    ['AWS', null, null, 'AWS::Other::Other'],
    // A type that is a name of Object's prototype is no table entry.
    ['Kubernetes', 'constructor', 'core', 'Kubernetes::Core::constructor'],
  ] as const)('%s %s (%s) is %s', (provider, type, group, expected) => {
    expect(prowlerResourceType(provider, type, group)).toBe(expected);
  });
});

describe('epochOrUtcTimestamp', () => {
  it.each([
    [1739539650, '2025-02-14T13:27:30.000Z'],
    ['1739539650', '2025-02-14T13:27:30.000Z'],
    ['2025-02-14T14:27:30.710664', '2025-02-14T14:27:30.710Z'],
    ['2024-06-03T14:15:19', '2024-06-03T14:15:19.000Z'],
    ['2024-06-03T14:15:19.382075+02:00', '2024-06-03T12:15:19.382Z'],
    ['2024-06-03', '2024-06-03T00:00:00.000Z'],
    ['yesterday', null],
    ['', null],
    [null, null],
    [-1, null],
    [1e20, null],
  ] as const)('%j is %j', (value, expected) => {
    expect(epochOrUtcTimestamp(value)).toBe(expected);
  });
});
