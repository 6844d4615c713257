// README.md's table of settings matches the settings table of src/config.ts: every variable has its row, with its
// flag and its default.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CLIENT_SETTINGS, flagName, SETTINGS, type AnySetting } from '../src/config.js';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const rows = readme.split('\n').filter((line) => line.startsWith('|') && line.includes('`SECINV_'));
const settings: AnySetting[] = [...Object.values(SETTINGS), ...Object.values(CLIENT_SETTINGS)];

describe("README's settings", () => {
  it.each(settings.map((s) => [s.env, s] as const))('%s has its row, flag and default', (env, s) => {
    const row = rows.find((r) => r.includes(`\`${env}\``));
    expect(row, `README.md has no row for ${env}`).toBeDefined();
    if (s.flag !== undefined) expect(row).toContain(`\`${flagName(s.flag)}\``);
    if (typeof s.fallback === 'string' || typeof s.fallback === 'number') expect(row).toContain(`\`${s.fallback}\``);
    if (s.demo !== undefined) expect(row).toContain(`\`${s.demo}\``);
  });

  it('lists no variable that is not a setting', () => {
    const named = new Set(rows.flatMap((r) => r.match(/SECINV_[A-Z_]+/g) ?? []));
    expect([...named].sort()).toEqual(settings.map((s) => s.env).sort());
  });
});
