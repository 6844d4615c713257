// The rules of alerts (pipeline.md §5): which changes an endpoint's filters pass, the flags' words, the retry
// schedule and its window, the delivery id, and what a destination URL may be.
import { describe, expect, it } from 'vitest';
import {
  deliveryId,
  filtersText,
  newWebhookSecret,
  NO_FILTERS,
  parseChangeTypes,
  parseSeverity,
  passesFilters,
  retryPlan,
  RETRY_WINDOW_MS,
  urlProblem,
  type ChangeFacts,
  type WebhookFilters,
} from '../../src/domain/webhooks.js';

const filters = (f: Partial<WebhookFilters>): WebhookFilters => ({ ...NO_FILTERS, ...f });
const critical: ChangeFacts = { type: 'finding.opened', severity: 'CRITICAL', hasKev: false, hasExploit: false };
const lowKev: ChangeFacts = { type: 'finding.updated', severity: 'LOW', hasKev: true, hasExploit: true };
const asset: ChangeFacts = { type: 'asset.created' };
const highRisk: ChangeFacts = { type: 'risk.opened', severity: 'HIGH' };
const lowRisk: ChangeFacts = { type: 'risk.updated', severity: 'LOW' };

describe('passesFilters', () => {
  it('passes every change without filters', () => {
    for (const facts of [critical, lowKev, asset, highRisk]) expect(passesFilters(NO_FILTERS, facts)).toBe(true);
  });

  it('--types selects by type', () => {
    const only = filters({ types: ['finding.opened', 'risk.opened'] });
    expect([critical, lowKev, asset, highRisk].map((f) => passesFilters(only, f))).toEqual([true, false, false, true]);
  });

  it('--min-severity selects findings and risks at or above it, and lets assets pass', () => {
    const high = filters({ minSeverity: 'HIGH' });
    expect([critical, lowKev, asset, highRisk, lowRisk].map((f) => passesFilters(high, f))).toEqual([
      true,
      false,
      true,
      true,
      false,
    ]);
    // A finding whose state is unknown does not pass a severity floor.
    expect(passesFilters(high, { type: 'finding.resolved' })).toBe(false);
  });

  it('--kev and --exploit select findings that are in KEV / exploited; assets and risks do not pass', () => {
    for (const flag of ['kev', 'exploit'] as const) {
      const only = filters({ [flag]: true });
      expect([critical, lowKev, asset, highRisk].map((f) => passesFilters(only, f))).toEqual([
        false,
        true,
        false,
        false,
      ]);
    }
    const both = filters({ kev: true, exploit: true });
    expect(passesFilters(both, { ...lowKev, hasExploit: false })).toBe(false);
    expect(passesFilters(both, lowKev)).toBe(true);
  });

  it('every filter given must pass', () => {
    const f = filters({ kev: true, minSeverity: 'HIGH' });
    expect(passesFilters(f, lowKev)).toBe(false);
    expect(passesFilters(f, { ...lowKev, severity: 'CRITICAL' })).toBe(true);
  });
});

describe('the flags', () => {
  it('--types takes known change types and names the first unknown one', () => {
    expect(parseChangeTypes('finding.opened, risk.opened,finding.opened')).toEqual({
      types: ['finding.opened', 'risk.opened'],
    });
    expect(parseChangeTypes('finding.opened,finding.exploded')).toEqual({
      problem: expect.stringContaining("unknown change type 'finding.exploded'"),
    });
    expect(parseChangeTypes(' , ')).toEqual({ problem: 'give at least one change type' });
  });

  it('--min-severity takes a finding severity, in any case', () => {
    expect(parseSeverity('high')).toEqual({ severity: 'HIGH' });
    expect(parseSeverity('severe')).toEqual({ problem: expect.stringContaining("unknown severity 'severe'") });
  });

  it('a destination is an http(s) URL with a host, no credentials and no fragment', () => {
    expect(urlProblem('https://hooks.example.com/secinv?team=a')).toBeUndefined();
    expect(urlProblem('http://10.0.0.1:8080/x')).toBeUndefined();
    expect(urlProblem('ftp://example.com/')).toMatch(/http:\/\/ or https:\/\//);
    expect(urlProblem('example.com/hook')).toMatch(/not a URL/);
    expect(urlProblem('https://user:pw@example.com/')).toMatch(/credentials/);
    expect(urlProblem('https://example.com/#x')).toMatch(/fragment/);
    expect(urlProblem(`https://example.com/${'a'.repeat(2100)}`)).toMatch(/longer than/);
  });

  it('describes filters in the words of the flags', () => {
    expect(filtersText(NO_FILTERS)).toBe('-');
    expect(filtersText(filters({ types: ['finding.opened'], minSeverity: 'HIGH', kev: true }))).toBe(
      'types=finding.opened min-severity=HIGH kev',
    );
  });
});

describe('retryPlan', () => {
  it('waits about 10 s, 1 min, 10 min, 1 h, then every 6 h', () => {
    const waits = [1, 2, 3, 4, 5, 6].map((failures) => retryPlan(failures, 0, 1000).retryAt! - 1000);
    expect(waits).toEqual([10_000, 60_000, 600_000, 3_600_000, 21_600_000, 21_600_000]);
  });

  it('tries once more at the end of three days, then gives up', () => {
    const since = Date.parse('2026-01-01T00:00:00Z');
    const late = since + RETRY_WINDOW_MS - 60_000;
    expect(retryPlan(12, since, late).retryAt).toBe(since + RETRY_WINDOW_MS);
    expect(retryPlan(13, since, since + RETRY_WINDOW_MS).retryAt).toBeUndefined();
  });

  it('scales the waits and the window together', () => {
    expect(retryPlan(1, 0, 0, 0.01).retryAt).toBe(100);
    expect(retryPlan(5, 0, 0, 0.01).retryAt).toBe(216_000);
    expect(retryPlan(20, 0, RETRY_WINDOW_MS * 0.01, 0.01).retryAt).toBeUndefined();
  });
});

describe('ids and secrets', () => {
  it('a batch has one id, the same for its every retry, another for any other batch', () => {
    expect(deliveryId('wh_1', 10, 20)).toBe(deliveryId('wh_1', 10, 20));
    expect(new Set([deliveryId('wh_1', 10, 20), deliveryId('wh_1', 20, 30), deliveryId('wh_2', 10, 20)]).size).toBe(3);
  });

  it('a secret is whsec_ and the base64 of 32 random bytes', () => {
    const secret = newWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(Buffer.from(secret.slice('whsec_'.length), 'base64')).toHaveLength(32);
    expect(newWebhookSecret()).not.toBe(secret);
  });
});
