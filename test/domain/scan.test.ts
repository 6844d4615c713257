// The shared ingest rules: severity words, registry hosts, scanned asset ids, package classes, CWE entries.
import { describe, expect, it } from 'vitest';
import { idProblem } from '../../src/domain/ids.js';
import {
  cweEntry,
  IMAGE_TYPES,
  mapSeverity,
  registryLocation,
  scannedAssetId,
  serviceOf,
  targetClassOf,
} from '../../src/domain/scan.js';

const TENANT = '11111111-1111-4111-8111-111111111111';

describe('mapSeverity', () => {
  it('maps every scanner word onto the enum, unknown words to UNKNOWN', () => {
    expect(['CRITICAL', 'High', 'medium', 'Low'].map(mapSeverity)).toEqual(['CRITICAL', 'HIGH', 'MEDIUM', 'LOW']);
    expect(['Negligible', 'info'].map(mapSeverity)).toEqual(['INFORMATIONAL', 'INFORMATIONAL']);
    expect(['Unknown', 'none', '', 'severe', null, undefined, 3].map(mapSeverity)).toEqual(Array(7).fill('UNKNOWN'));
  });
});

describe('registryLocation', () => {
  it('reads provider, region and account from cloud registry hosts', () => {
    expect(registryLocation('123456789012.dkr.ecr.eu-west-1.amazonaws.com/payments/api@sha256:ab')).toEqual({
      provider: 'AWS',
      region: 'eu-west-1',
      accountId: '123456789012',
    });
    expect(registryLocation('acme.azurecr.io/web:1.2')).toEqual({ provider: 'Azure', region: null, accountId: null });
    expect(registryLocation('gcr.io/proj/app:1')).toEqual({ provider: 'GCP', region: null, accountId: null });
    expect(registryLocation('eu.gcr.io/proj/app:1')).toEqual({ provider: 'GCP', region: null, accountId: null });
    expect(registryLocation('europe-west1-docker.pkg.dev/proj/repo/app:1')).toEqual({
      provider: 'GCP',
      region: 'europe-west1',
      accountId: null,
    });
  });

  it('says nothing for other registries and bare names', () => {
    for (const ref of [
      'busybox:1.32.1',
      'cgr.dev/chainguard/ruby:latest-3.0',
      'docker.io/library/nginx',
      'localhost:5000/x',
      'evil.com/123456789012.dkr.ecr.us-east-1.amazonaws.com/x',
    ]) {
      expect(registryLocation(ref), ref).toBeNull();
    }
  });
});

describe('scannedAssetId', () => {
  it('is the resource name with lower-case provider, service and type segments', () => {
    expect(
      scannedAssetId({
        tenantId: TENANT,
        type: IMAGE_TYPES.AWS,
        region: 'eu-west-1',
        resourceId: 'payments/api@sha256:ab12',
      }),
    ).toBe(`sirn:assets:${TENANT}:aws:ecr:image:eu-west-1:payments/api@sha256:ab12`);
    expect(serviceOf(IMAGE_TYPES.Kubernetes)).toBe('Kubernetes::Core');
    expect(
      scannedAssetId({ tenantId: TENANT, type: IMAGE_TYPES.Kubernetes, region: null, resourceId: 'busybox:1.32.1' }),
    ).toBe(`sirn:assets:${TENANT}:kubernetes:core:containerimage:global:busybox:1.32.1`);
  });

  it('replaces forbidden characters and keeps keys that differ only there apart', () => {
    const a = scannedAssetId({
      tenantId: TENANT,
      type: IMAGE_TYPES.GCP,
      region: null,
      resourceId: 'teamdojo:latest (alpine 3.9.4)',
    });
    const b = scannedAssetId({
      tenantId: TENANT,
      type: IMAGE_TYPES.GCP,
      region: null,
      resourceId: 'teamdojo:latest (alpine,3.9.4)',
    });
    expect(a).toMatch(/^sirn:assets:.*:teamdojo:latest__alpine_3\.9\.4_~[0-9a-f]{12}$/);
    expect(a).not.toBe(b);
    expect([idProblem(a), idProblem(b)]).toEqual([null, null]);
  });

  it('stays within 1024 characters, distinct for distinct long keys', () => {
    const long = (c: string) =>
      scannedAssetId({
        tenantId: TENANT,
        type: IMAGE_TYPES.AWS,
        region: 'us-east-1',
        resourceId: `repo@${'x'.repeat(2000)}${c}`,
      });
    expect(idProblem(long('1'))).toBeNull();
    expect(long('1').length).toBe(1024);
    expect(long('1')).not.toBe(long('2'));
  });
});

describe('package classes and CWEs', () => {
  it('targetClassOf: OS package types are os-pkgs, the rest lang-pkgs', () => {
    expect(['apk', 'deb', 'rpm', 'alpm', 'portage'].map(targetClassOf)).toEqual(Array(5).fill('os-pkgs'));
    expect(['npm', 'gem', 'java-archive', 'python', 'binary'].map(targetClassOf)).toEqual(Array(5).fill('lang-pkgs'));
  });

  it('cweEntry accepts CWE-79, 79 and the number 79', () => {
    const expected = {
      id: 'CWE-79',
      name: null,
      cweId: '79',
      source: 'nvd',
      sourceUrl: 'https://cwe.mitre.org/data/definitions/79.html',
      description: null,
    };
    expect([cweEntry('CWE-79', 'nvd'), cweEntry('79', 'nvd'), cweEntry(79, 'nvd')]).toEqual([
      expected,
      expected,
      expected,
    ]);
    expect(cweEntry('NVD-CWE-Other', null)).toMatchObject({ id: 'NVD-CWE-Other', cweId: null, sourceUrl: null });
  });
});
