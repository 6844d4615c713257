import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import {
  ASSET_ID_PREFIX,
  DEFAULT_NOW,
  SHARED_ASSET_IDS,
  generateRecords,
  writeInventory,
  type GenerateOptions,
} from '../../src/generate/generator.js';
import { hasVendorFix } from '../../src/domain/derived.js';
import { compileRule, type MatchableAsset } from '../../src/domain/exemptions.js';
import type { ExemptionRule } from '../../src/domain/vulnerabilities.js';
import { normalizeRecord } from '../../src/input/records.js';
import { importKinds, type ImportKind } from '../../src/domain/records.js';

type Json = Record<string, unknown>;
interface Line {
  kind: ImportKind;
  record: Json;
}
interface Tag {
  Key: string;
  Value: string;
}

const parse = (opts: GenerateOptions): Line[] => [...generateRecords(opts)].map((l) => JSON.parse(l) as Line);
const ofKind = (lines: readonly Line[], kind: ImportKind): Json[] =>
  lines.filter((l) => l.kind === kind).map((l) => l.record);
const str = (v: unknown): string => v as string;

const SMALL: GenerateOptions = { seed: 'test', tenants: 2, assets: 40, findingsPerAsset: 3, risks: 7 };
const MEDIUM: GenerateOptions = { seed: 'medium', tenants: 3, assets: 1500, findingsPerAsset: 4, risks: 400 };
const small = parse(SMALL);
const medium = parse(MEDIUM);

const identityFields: Record<ImportKind, readonly string[]> = {
  tenant: ['tenantId'],
  environment: ['tenantId', 'environmentId'],
  integration: ['tenantId', 'integrationId'],
  assetGroup: ['tenantId', 'assetGroupId'],
  exemption: ['tenantId', 'exemptionId'],
  asset: ['tenantId', 'id'],
  vulnerability: ['tenantId', 'assetId', 'vulnerabilityId'],
  risk: ['tenantId', 'id'],
};
// eslint-disable-next-line no-control-regex
const FORBIDDEN_IN_ID = /[,%\s\u0000-\u001f\u007f]/;
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Per tenant (in output order): its tenantId and the records that followed it. */
function byTenant(lines: readonly Line[]): { tenantId: string; lines: Line[] }[] {
  const out: { tenantId: string; lines: Line[] }[] = [];
  for (const l of lines) {
    if (l.kind === 'tenant') out.push({ tenantId: str(l.record.tenantId), lines: [] });
    else out[out.length - 1]?.lines.push(l);
  }
  return out;
}

describe('generateRecords: determinism', () => {
  it('yields byte-identical lines for the same options', () => {
    expect([...generateRecords(SMALL)]).toEqual([...generateRecords({ ...SMALL })]);
  });

  it('uses a fixed default now, never the clock', () => {
    expect([...generateRecords(SMALL)]).toEqual([...generateRecords({ ...SMALL, now: new Date(DEFAULT_NOW) })]);
    expect(DEFAULT_NOW.toISOString()).toBe('2026-11-01T00:00:00.000Z');
  });

  it('differs for another seed, and a numeric seed is the same as its string', () => {
    const a = [...generateRecords(SMALL)];
    const b = [...generateRecords({ ...SMALL, seed: 'other' })];
    expect(b).not.toEqual(a);
    expect(new Set(b).size).toBe(b.length);
    expect(b.filter((l) => a.includes(l))).toEqual([]);
    expect([...generateRecords({ ...SMALL, seed: 42 })]).toEqual([...generateRecords({ ...SMALL, seed: '42' })]);
  });

  it('moves timestamps with now', () => {
    const later = parse({ ...SMALL, now: new Date('2030-01-01T00:00:00.000Z') });
    const latest = Math.max(...ofKind(later, 'asset').map((a) => Date.parse(str(a.lastObservedAt))));
    expect(latest).toBeGreaterThan(Date.parse('2029-12-01T00:00:00.000Z'));
  });

  it('is lazy: the first records of a huge inventory come at once', () => {
    const iterator = generateRecords({
      seed: 'huge',
      tenants: 1,
      assets: 1_000_000_000,
      findingsPerAsset: 10,
      risks: 1_000_000,
    });
    const first: string[] = [];
    for (const l of iterator) {
      first.push(l);
      if (first.length === 500) break;
    }
    expect(first).toHaveLength(500);
  });

  it('rejects invalid options', () => {
    expect(() => [...generateRecords({ ...SMALL, assets: -1 })]).toThrow(RangeError);
    expect(() => [...generateRecords({ ...SMALL, tenants: 1.5 })]).toThrow(RangeError);
    expect(() => [...generateRecords({ ...SMALL, findingsPerAsset: Number.NaN })]).toThrow(RangeError);
  });
});

describe('generateRecords: shape', () => {
  it('writes one {kind, record} object per line with a valid kind', () => {
    for (const l of generateRecords(SMALL)) {
      expect(l).not.toContain('\n');
      const parsed = JSON.parse(l) as Json;
      expect(Object.keys(parsed)).toEqual(['kind', 'record']);
      expect(importKinds).toContain(parsed.kind);
      expect(typeof parsed.record).toBe('object');
    }
  });

  it('produces the requested counts', () => {
    const count = (kind: ImportKind) => ofKind(small, kind).length;
    expect(count('tenant')).toBe(2);
    expect(count('asset')).toBe(80);
    expect(count('risk')).toBe(14);
    for (const t of byTenant(small)) {
      const n = (kind: ImportKind) => t.lines.filter((l) => l.kind === kind).length;
      expect(n('environment')).toBeGreaterThanOrEqual(3);
      expect(n('environment')).toBeLessThanOrEqual(4);
      expect(n('integration')).toBeGreaterThanOrEqual(2);
      expect(n('integration')).toBeLessThanOrEqual(6);
      expect(n('assetGroup')).toBeGreaterThanOrEqual(3);
      expect(n('assetGroup')).toBeLessThanOrEqual(5);
      expect(n('exemption')).toBeGreaterThanOrEqual(3);
      expect(n('exemption')).toBeLessThanOrEqual(5);
    }
    expect(count('vulnerability')).toBeGreaterThan(0);
    expect(parse({ ...SMALL, findingsPerAsset: 0 }).filter((l) => l.kind === 'vulnerability')).toEqual([]);
    expect(parse({ ...SMALL, tenants: 0 })).toEqual([]);
  });

  it('keeps the average findings per asset close to the request, with variation', () => {
    for (const t of byTenant(medium)) {
      const findings = t.lines.filter((l) => l.kind === 'vulnerability');
      expect(findings.length / MEDIUM.assets).toBeGreaterThan(MEDIUM.findingsPerAsset * 0.85);
      expect(findings.length / MEDIUM.assets).toBeLessThan(MEDIUM.findingsPerAsset * 1.15);
      const perAsset = new Map<string, number>();
      for (const f of findings) perAsset.set(str(f.record.assetId), (perAsset.get(str(f.record.assetId)) ?? 0) + 1);
      expect(perAsset.size).toBeLessThan(MEDIUM.assets); // some assets have none
      expect(Math.max(...perAsset.values())).toBeGreaterThan(MEDIUM.findingsPerAsset * 2);
    }
  });

  it('emits each tenant in dependency order', () => {
    const rank: Record<ImportKind, number> = {
      tenant: 0,
      environment: 1,
      integration: 2,
      asset: 3,
      vulnerability: 3,
      assetGroup: 4,
      exemption: 5,
      risk: 6,
    };
    for (const t of byTenant(small)) {
      const ranks = t.lines.map((l) => rank[l.kind]);
      expect(ranks).toEqual([...ranks].sort((a, b) => a - b));
    }
  });

  it('passes the import validation of every kind', () => {
    for (const { kind, record } of medium.slice(0, 20_000)) {
      const result = normalizeRecord(kind, record);
      expect('problems' in result ? result.problems : [], `${kind} ${JSON.stringify(record).slice(0, 200)}`).toEqual(
        [],
      );
    }
  });

  it('does not emit derived fields', () => {
    const derivedAsset = [
      'numberOfLowVulnerabilities',
      'numberOfMediumVulnerabilities',
      'numberOfHighVulnerabilities',
      'numberOfCriticalVulnerabilities',
      'isVulnerable',
      'hasKev',
      'hasExploit',
      'isExploitable',
      'vulnerabilityScore',
    ];
    for (const a of ofKind(small, 'asset')) for (const f of derivedAsset) expect(a).not.toHaveProperty(f);
    for (const v of ofKind(small, 'vulnerability')) {
      for (const f of ['severityLevelValue', 'hasVendorFix', 'exemptions']) expect(v).not.toHaveProperty(f);
    }
  });
});

describe('generateRecords: identities and tenancy', () => {
  it('gives every record its tenant and the tenant organizationId', () => {
    for (const t of byTenant(medium)) {
      const tenant = ofKind(medium, 'tenant').find((r) => r.tenantId === t.tenantId);
      expect(tenant?.organizationId).toMatch(/^[0-9a-f-]{36}$/);
      expect(typeof tenant?.name).toBe('string');
      for (const { record } of t.lines) {
        expect(record.tenantId).toBe(t.tenantId);
        expect(record.organizationId).toBe(tenant?.organizationId);
      }
    }
  });

  it('keeps ids free of commas, %, whitespace and control characters, within 1024 characters', () => {
    for (const { kind, record } of medium) {
      for (const field of identityFields[kind]) {
        const value = str(record[field]);
        expect(value.length).toBeGreaterThan(0);
        expect(value.length).toBeLessThanOrEqual(1024);
        expect(FORBIDDEN_IN_ID.test(value), `${kind}.${field} = ${value}`).toBe(false);
      }
    }
    for (const g of ofKind(medium, 'assetGroup'))
      for (const id of g.assetIds as string[]) expect(FORBIDDEN_IN_ID.test(id)).toBe(false);
  });

  it('forms asset ids from prefix, uuid, provider, service, type, region and resource id', () => {
    const assets = ofKind(medium, 'asset');
    const shape = new RegExp(
      `^${ASSET_ID_PREFIX}:assets:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}:(aws|azure|gcp|kubernetes):[a-z0-9]+:[a-z0-9]+:[a-z0-9-]+:.+$`,
    );
    for (const a of assets) {
      expect(a.id).toMatch(shape);
      const [provider, service, type] = str(a.type).split('::');
      expect(str(a.id).split(':').slice(3, 7)).toEqual(
        [provider, service, type, a.region].map((s) => str(s).toLowerCase()),
      );
      expect(str(a.id).endsWith(`:${str(a.resourceId)}`)).toBe(true);
    }
    expect(assets.some((a) => str(a.resourceId).includes('/'))).toBe(true);
    for (const t of byTenant(medium)) {
      const ids = t.lines.filter((l) => l.kind === 'asset').map((l) => l.record.id);
      expect(new Set(ids).size).toBe(ids.length);
    }
  });

  it('shares the first asset ids between tenants, with different contents, and only those', () => {
    const [first, second] = byTenant(medium).map((t) => t.lines.filter((l) => l.kind === 'asset').map((l) => l.record));
    if (!first || !second) throw new Error('expected two tenants');
    for (let i = 0; i < SHARED_ASSET_IDS; i++) {
      expect(second[i]?.id).toBe(first[i]?.id);
      expect(second[i]?.integrationId).not.toBe(first[i]?.integrationId);
    }
    const firstIds = new Set(first.map((a) => a.id));
    expect(second.filter((a) => firstIds.has(a.id))).toHaveLength(SHARED_ASSET_IDS);
  });

  it('emits every finding after its asset in the same tenant, once per (asset, vulnerability)', () => {
    for (const t of byTenant(medium)) {
      const assets = new Map<string, Json>();
      const seen = new Set<string>();
      let current: Json | undefined;
      for (const { kind, record } of t.lines) {
        if (kind === 'asset') {
          assets.set(str(record.id), record);
          current = record;
        }
        if (kind !== 'vulnerability') continue;
        const asset = assets.get(str(record.assetId));
        expect(asset).toBeDefined();
        expect(record.assetId).toBe(current?.id); // immediately after its asset
        expect(record.provider).toBe(asset?.provider);
        expect(record.assetType).toBe(asset?.type);
        expect(record.integrationId).toBe(asset?.integrationId);
        expect(record.executionId).toBe(String(asset?.executionId));
        const key = `${str(record.assetId)} ${str(record.vulnerabilityId)}`;
        expect(seen.has(key)).toBe(false);
        seen.add(key);
      }
    }
  });
});

describe('generateRecords: realistic content', () => {
  const assets = ofKind(medium, 'asset');
  const findings = ofKind(medium, 'vulnerability');
  const now = DEFAULT_NOW.getTime();
  const twoYears = 731 * 86_400_000;

  it('covers the four providers with Provider::Service::Type types', () => {
    expect(new Set(assets.map((a) => a.provider))).toEqual(new Set(['AWS', 'Azure', 'GCP', 'Kubernetes']));
    for (const a of assets) {
      expect(a.type).toMatch(/^(AWS|Azure|GCP|Kubernetes)::[A-Za-z0-9]+::[A-Za-z0-9]+$/);
      expect(str(a.type).startsWith(`${str(a.provider)}::`)).toBe(true);
      expect(a.service).toBe(str(a.type).split('::').slice(0, 2).join('::'));
      expect(a.resourceType).toBe(a.type);
    }
    const types = new Set(assets.map((a) => a.type));
    for (const t of [
      'AWS::EC2::Instance',
      'AWS::S3::Bucket',
      'AWS::Lambda::Function',
      'AWS::ECS::TaskDefinition',
      'Kubernetes::Core::Pod',
    ]) {
      expect(types).toContain(t);
    }
  });

  it('gives every asset secret arrays, some of them non-empty', () => {
    for (const a of assets) {
      for (const level of ['low', 'medium', 'high', 'critical']) {
        expect(Array.isArray(a[`${level}Secrets`])).toBe(true);
        expect(a[`numberOf${level[0]?.toUpperCase()}${level.slice(1)}Secrets`]).toBe(
          (a[`${level}Secrets`] as unknown[]).length,
        );
      }
    }
    const secrets = assets.flatMap((a) =>
      ['lowSecrets', 'mediumSecrets', 'highSecrets', 'criticalSecrets'].flatMap((k) => a[k] as Json[]),
    );
    expect(secrets.length).toBeGreaterThan(0);
    for (const s of secrets) expect(Object.keys(s).sort()).toEqual(['line', 'path', 'sha', 'type']);
  });

  it('uses tags {Key, Value}, operational state on EC2 instances, scores and execution ids of the right types', () => {
    for (const a of assets) {
      for (const tag of a.tags as Tag[]) expect(Object.keys(tag)).toEqual(['Key', 'Value']);
      for (const tag of a.resourceTags as Json[]) expect(['string', 'boolean']).toContain(typeof tag.Value);
      expect(Number.isSafeInteger(a.executionId)).toBe(true);
      expect(typeof a.providerAccountId).toBe('number');
      if (a.riskScore !== null) {
        expect(a.riskScore).toBeGreaterThanOrEqual(0);
        expect(a.riskScore).toBeLessThanOrEqual(10);
        expect(Math.round((a.riskScore as number) * 10) / 10).toBe(a.riskScore);
      }
      expect(typeof a.rawData).toBe('object');
    }
    const ec2 = assets.filter((a) => a.type === 'AWS::EC2::Instance');
    expect(ec2.every((a) => a.operationalState === 'active' || a.operationalState === 'inactive')).toBe(true);
    expect(assets.filter((a) => a.operationalState !== null).length).toBeGreaterThan(ec2.length * 0.9);
    expect(assets.some((a) => a.riskScore === null)).toBe(true);
    // A few distinct execution ids per integration.
    const executions = new Map<unknown, Set<unknown>>();
    for (const a of assets)
      executions.set(a.integrationId, (executions.get(a.integrationId) ?? new Set()).add(a.executionId));
    expect(Math.max(...[...executions.values()].map((s) => s.size))).toBeLessThanOrEqual(5);
  });

  it('keeps timestamps in UTC within two years before now, first before last', () => {
    const check = (value: unknown) => {
      expect(value).toMatch(ISO_UTC);
      const ms = Date.parse(str(value));
      expect(ms).toBeLessThanOrEqual(now);
      expect(ms).toBeGreaterThanOrEqual(now - twoYears);
    };
    for (const a of assets) {
      for (const f of ['createdAt', 'firstObservedAt', 'lastObservedAt', 'updatedAt', 'lastScannedAt']) check(a[f]);
      expect(Date.parse(str(a.firstObservedAt))).toBeLessThanOrEqual(Date.parse(str(a.lastObservedAt)));
    }
    for (const f of findings.slice(0, 5000)) {
      check(f.firstObservedAt);
      check(f.lastObservedAt);
      expect(Date.parse(str(f.firstObservedAt))).toBeLessThanOrEqual(Date.parse(str(f.lastObservedAt)));
      expect(f.publishedDate).toMatch(ISO_UTC);
    }
  });

  it('gives findings CVE ids, skewed severities, packages and exploit data', () => {
    const share = (test: (f: Json) => boolean) => findings.filter(test).length / findings.length;
    for (const f of findings) {
      expect(f.vulnerabilityId).toMatch(/^CVE-\d{4}-\d{4,5}$/);
      expect(typeof f.executionId).toBe('string');
      const packages = f.packages as Json[];
      expect(packages.length).toBeGreaterThanOrEqual(1);
      expect(packages.length).toBeLessThanOrEqual(3);
      for (const p of packages) {
        expect(['os-pkgs', 'lang-pkgs']).toContain(p.targetClass);
        expect(['debian', 'ubuntu', 'alpine', 'npm', 'jar', 'python-pkg']).toContain(p.targetType);
      }
      if (f.hasKev) {
        const kev = f.knownExploit as Json;
        expect(kev.dueDate).toMatch(/^\d{4}-\d{2}-\d{2}$/);
        expect(kev.dateAdded).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      } else {
        expect(f.knownExploit).toBeNull();
      }
      expect((f.exploits as unknown[]).length > 0).toBe(f.hasExploit);
    }
    expect(share((f) => f.severityLevel === 'MEDIUM')).toBeGreaterThan(share((f) => f.severityLevel === 'CRITICAL'));
    expect(new Set(findings.map((f) => f.severityLevel))).toEqual(
      new Set(['CRITICAL', 'HIGH', 'MEDIUM', 'LOW', 'INFORMATIONAL', 'UNKNOWN']),
    );
    expect(share((f) => f.hasKev === true)).toBeGreaterThan(0.01);
    expect(share((f) => f.hasKev === true)).toBeLessThan(0.07);
    expect(share((f) => f.hasExploit === true)).toBeGreaterThan(0.05);
    expect(share((f) => f.hasExploit === true)).toBeLessThan(0.2);
    expect(share((f) => f.isExploitable === true)).toBeGreaterThan(0.2);
    expect(share((f) => f.isExploitable === true)).toBeLessThan(0.4);
    const packages = findings.flatMap((f) => f.packages as Json[]);
    expect(packages.some((p) => p.fixedVersion === '')).toBe(true);
    expect(packages.some((p) => !('fixedVersion' in p))).toBe(true);
  });

  it('names ECS task definition targets as {TaskDefinition}:{revision} > {containerImage}', () => {
    const ecs = new Map(assets.filter((a) => a.type === 'AWS::ECS::TaskDefinition').map((a) => [a.id, a]));
    const targets = findings.filter((f) => ecs.has(f.assetId));
    expect(targets.length).toBeGreaterThan(0);
    for (const f of targets) expect(f.targetName).toMatch(/^[a-z-]+:\d+ > \S+:\d+\.\d+\.\d+$/);
  });

  it('lets about 1% of assets name an integration that does not exist', () => {
    const integrations = new Set(ofKind(medium, 'integration').map((i) => i.integrationId));
    const unknown = assets.filter((a) => !integrations.has(a.integrationId)).length / assets.length;
    expect(unknown).toBeGreaterThan(0.002);
    expect(unknown).toBeLessThan(0.03);
    expect(
      ofKind(medium, 'integration').every((i) => i.environmentId === null || typeof i.environmentId === 'string'),
    ).toBe(true);
  });

  it('points risks mostly at existing assets of the tenant', () => {
    for (const t of byTenant(medium)) {
      const ids = new Set(t.lines.filter((l) => l.kind === 'asset').map((l) => l.record.id));
      const risks = t.lines.filter((l) => l.kind === 'risk').map((l) => l.record);
      const known = risks.filter((r) => ids.has(r.primaryAssetId)).length / risks.length;
      expect(known).toBeGreaterThan(0.88);
      expect(known).toBeLessThan(1);
      for (const r of risks) {
        expect(['CRITICAL', 'HIGH', 'MEDIUM', 'LOW']).toContain(r.severityLevel);
        expect(['OPEN', 'DISMISSED_ACCEPTED', 'DISMISSED_NOT_A_RISK']).toContain(r.lifecycleState);
        expect(Object.keys(r.meta as Json)).toEqual(['assetName', 'resourceType', 'fullResourceName']);
      }
    }
  });

  it('bounds asset groups and fills them with assets of the tenant', () => {
    for (const t of byTenant(medium)) {
      const ids = new Set(t.lines.filter((l) => l.kind === 'asset').map((l) => l.record.id));
      for (const g of t.lines.filter((l) => l.kind === 'assetGroup').map((l) => l.record)) {
        const members = g.assetIds as string[];
        expect(members.length).toBeLessThanOrEqual(200);
        expect(members.every((id) => ids.has(id))).toBe(true);
      }
    }
  });
});

describe('generateRecords: exemptions', () => {
  /** Exemption matching by the domain's rule (src/domain/exemptions.ts), over one tenant's records. */
  function exemptedShare(lines: readonly Line[]): { share: number; matchedRules: number; rules: number } {
    const assets = new Map<string, MatchableAsset & { groupIds: Set<string> }>();
    for (const { kind, record } of lines) {
      if (kind === 'asset')
        assets.set(str(record.id), { region: str(record.region), tags: record.tags as Tag[], groupIds: new Set() });
      if (kind === 'assetGroup')
        for (const id of record.assetIds as string[]) assets.get(id)?.groupIds.add(str(record.assetGroupId));
    }
    const rules = lines
      .filter((l) => l.kind === 'exemption')
      .flatMap((l) => (l.record.exemption as { rules: ExemptionRule[] }).rules)
      .map((rule) => ({ rule, criteria: compileRule(rule) }));
    const matched = new Set<ExemptionRule>();
    let exempted = 0;
    const findings = lines.filter((l) => l.kind === 'vulnerability').map((l) => l.record);
    for (const f of findings) {
      const asset = assets.get(str(f.assetId));
      if (!asset) throw new Error(`finding of an unknown asset ${str(f.assetId)}`);
      const finding = {
        assetId: str(f.assetId),
        vulnerabilityId: str(f.vulnerabilityId),
        hasVendorFix: hasVendorFix(f.packages as { fixedVersion: string | null }[]),
      };
      let any = false;
      for (const { rule, criteria } of rules) {
        if (criteria.length > 0 && criteria.every((holds) => holds(finding, asset))) {
          any = true;
          matched.add(rule);
        }
      }
      if (any) exempted++;
    }
    return { share: exempted / findings.length, matchedRules: matched.size, rules: rules.length };
  }

  it('use every rule criterion, including a rule with several criteria', () => {
    for (const t of byTenant(medium)) {
      const rules = t.lines
        .filter((l) => l.kind === 'exemption')
        .flatMap((l) => (l.record.exemption as { rules: Json[] }).rules);
      for (const criterion of [
        'vulnerabilityId',
        'vulnerabilityIds',
        'assetIds',
        'assetGroupIds',
        'assetRegions',
        'assetTags',
      ]) {
        expect(
          rules.some((r) => r[criterion] !== null),
          criterion,
        ).toBe(true);
      }
      expect(rules.some((r) => r.noVendorFix === true)).toBe(true);
      expect(rules.every((r) => typeof r.exemptionType === 'string')).toBe(true);
      const criteria = (r: Json) =>
        ['vulnerabilityId', 'vulnerabilityIds', 'assetIds', 'assetGroupIds', 'assetRegions', 'assetTags'].filter(
          (k) => r[k] !== null,
        ).length + (r.noVendorFix === true ? 1 : 0);
      expect(rules.some((r) => r.assetRegions !== null && r.noVendorFix === true)).toBe(true);
      expect(rules.some((r) => criteria(r) >= 2)).toBe(true);
    }
  });

  it('match some findings of each tenant, but only a small share', () => {
    for (const t of byTenant(medium)) {
      const { share, matchedRules, rules } = exemptedShare(t.lines);
      expect(share).toBeGreaterThan(0);
      expect(share).toBeLessThan(0.05);
      expect(matchedRules).toBeGreaterThanOrEqual(Math.ceil(rules / 2));
    }
  });
});

describe('writeInventory', () => {
  it('writes every line with a newline, waiting for drain on a slow stream', async () => {
    const chunks: string[] = [];
    let drains = 0;
    const slow = new Writable({
      highWaterMark: 1024,
      write(chunk: Buffer, _encoding, callback) {
        chunks.push(chunk.toString('utf8'));
        setImmediate(callback);
      },
    });
    slow.on('drain', () => drains++);
    const opts: GenerateOptions = { seed: 'write', tenants: 1, assets: 300, findingsPerAsset: 4, risks: 20 };
    const { records } = await writeInventory(opts, slow);
    const expected = [...generateRecords(opts)];
    expect(records).toBe(expected.length);
    expect(chunks.join('')).toBe(expected.map((l) => `${l}\n`).join(''));
    expect(drains).toBeGreaterThan(0);
    expect(chunks.length).toBeLessThan(expected.length / 10); // batched, not one write per line
    expect(slow.writableEnded).toBe(false); // the caller owns the stream
  });
});
