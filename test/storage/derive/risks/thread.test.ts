// The risk rules' thread (src/storage/derive/risks/thread.ts): a batch the rules cannot run over is an error naming the
// rules, the thread answers the batches after it in order, and a closed thread refuses new batches.
import { afterEach, describe, expect, it } from 'vitest';
import type { RiskBatch } from '../../../../src/storage/derive/risks/compute.js';
import { threadComputer, type RiskComputer } from '../../../../src/storage/derive/risks/thread.js';

const batch = (assetId: string): RiskBatch => ({
  tenantId: 'tenant',
  organizationId: 'organization',
  at: '2026-01-01T00:00:00.000Z',
  production: [],
  assets: [
    {
      id: assetId,
      name: assetId,
      resource_type: 'AWS::EC2::Instance',
      region: 'us-east-1',
      integration_id: null,
      is_publicly_exposed: 1,
      has_admin_privileges: 0,
      has_overly_permissive_privileges: 0,
      n_low_secrets: 0,
      n_medium_secrets: 0,
      n_high_secrets: 0,
      n_critical_secrets: 0,
      scanned: 1,
      risk_score: null,
    },
  ],
  secrets: [],
  findings: [],
  epss: [],
  checks: [],
  // A stored risk the rules no longer make: it is to go.
  existing: [
    [
      `old-${assetId}`,
      {
        discovered_at: '2025-01-01T00:00:00.000Z',
        lifecycle_state: 'OPEN',
        integration_id: null,
        severity_level: 'LOW',
        resource_type: null,
        score: 1,
        doc: '{}',
      },
    ],
  ],
});

describe('the risk rules thread', () => {
  let thread: RiskComputer | undefined;
  afterEach(async () => {
    await thread?.close();
  });

  it('answers batches in order, reports a batch it cannot run, and goes on', async () => {
    thread = threadComputer();
    const broken = { ...batch('b'), findings: null } as unknown as RiskBatch;
    const answers = [thread.compute(batch('a')), thread.compute(broken), thread.compute(batch('c'))];
    const [first, second, third] = await Promise.allSettled(answers);
    expect(first).toMatchObject({ status: 'fulfilled', value: { inserted: [], gone: ['old-a'], risks: 0 } });
    expect(second?.status).toBe('rejected');
    expect(String((second as PromiseRejectedResult).reason)).toMatch(/^Error: the risk rules failed: TypeError/);
    expect(third).toMatchObject({ status: 'fulfilled', value: { gone: ['old-c'] } });
  });

  it('refuses batches once closed', async () => {
    thread = threadComputer();
    await thread.close();
    await expect(thread.compute(batch('a'))).rejects.toThrow("the risk rules' thread was closed");
  });
});
