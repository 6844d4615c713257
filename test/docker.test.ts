// The container files, checked without a container engine: what the image must be (multi-stage, Node 20 slim, a
// non-root user, the SQLite folder a volume, a health check on /livez) and that the files it starts and copies exist.
// hadolint lints the Dockerfile where it is installed.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const root = fileURLToPath(new URL('..', import.meta.url));
const dockerfile = readFileSync(`${root}Dockerfile`, 'utf8');
/** Instructions with their continuation lines joined, comments dropped. */
const instructions = dockerfile
  .replace(/\\\n/g, ' ')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l !== '' && !l.startsWith('#'));
const all = (keyword: string) => instructions.filter((l) => l.startsWith(`${keyword} `));
const hadolint = (() => {
  try {
    return execFileSync('which', ['hadolint']).toString().trim() || null;
  } catch {
    return null;
  }
})();

describe('Dockerfile', () => {
  it('builds in stages from node:20-slim', () => {
    const from = all('FROM');
    expect(from.length).toBeGreaterThanOrEqual(2);
    for (const line of from) expect(line).toMatch(/^FROM node:20-slim\b/);
    expect(all('COPY').some((l) => l.includes('--from=build'))).toBe(true);
  });

  it('runs as a user other than root, with the SQLite database in a volume', () => {
    const users = all('USER');
    expect(users.length).toBeGreaterThan(0);
    expect(users.at(-1)).not.toMatch(/^USER (root|0)\b/);
    const volume = /^VOLUME \["([^"]+)"\]/.exec(all('VOLUME')[0] ?? '')?.[1];
    expect(volume).toBeDefined();
    expect(dockerfile).toContain(`SECINV_DATABASE_URL=sqlite:${volume}/`);
    expect(dockerfile).toContain(`chown node:node ${volume}`);
  });

  it('checks its health on /livez', () => {
    expect(all('HEALTHCHECK').join('\n')).toContain('/livez');
  });

  it('starts a file that exists, and copies every file it names', () => {
    const entrypoint = JSON.parse(all('ENTRYPOINT')[0]!.slice('ENTRYPOINT '.length)) as string[];
    expect(entrypoint[0]).toBe('node');
    expect(existsSync(`${root}${entrypoint[1]}`)).toBe(true);
    expect(
      all('COPY').some((l) => l.endsWith(` ${entrypoint[1]!.split('/')[0]} ./${entrypoint[1]!.split('/')[0]}`)),
    ).toBe(true);
    // The entry point imports the bundle that the first stage's build writes to dist/.
    expect(readFileSync(`${root}${entrypoint[1]}`, 'utf8')).toContain('../dist/bundle/secinv.js');
    for (const line of all('COPY').filter((l) => !l.includes('--from'))) {
      for (const source of line.split(/\s+/).slice(1, -1)) expect(existsSync(`${root}${source}`), source).toBe(true);
    }
  });

  it("copies into the build stage every file the package's build script names", () => {
    const { scripts } = JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as { scripts: Record<string, string> };
    const named = scripts.build!.split(/\s+/).filter((word) => /^[\w.-]+(\/[\w.-]+)*\.(json|ts)$/.test(word));
    expect(named).toEqual(['tsconfig.build.json', 'scripts/bundle.ts', 'console/vite.config.ts']);
    const copied = all('COPY')
      .filter((l) => !l.includes('--from'))
      .flatMap((l) => l.split(/\s+/).slice(1, -1));
    for (const file of named)
      expect(
        copied.some((source) => file === source || file.startsWith(`${source}/`)),
        file,
      ).toBe(true);
  });

  it.skipIf(hadolint === null)(
    `passes hadolint${hadolint === null ? ' (skipped: hadolint is not installed)' : ''}`,
    () => {
      expect(() => execFileSync(hadolint!, [`${root}Dockerfile`], { stdio: 'pipe' })).not.toThrow();
    },
  );
});

describe('compose.yaml', () => {
  const compose = parse(readFileSync(`${root}compose.yaml`, 'utf8')) as {
    services: Record<
      string,
      { image?: string; build?: string; environment?: Record<string, string>; depends_on?: Record<string, unknown> }
    >;
  };
  it('runs secinv from this Dockerfile on a PostgreSQL service, once that is healthy', () => {
    const { db, secinv } = compose.services;
    expect(db?.image).toMatch(/^postgres:\d+/);
    expect(secinv?.build).toBe('.');
    expect(secinv?.environment?.SECINV_DATABASE_URL).toMatch(/^postgres:\/\/[^@]+@db:5432\//);
    expect(secinv?.environment?.SECINV_API_DATABASE_URL).toMatch(/^postgres:\/\/secinv_api:/);
    expect(secinv?.depends_on).toEqual({ db: { condition: 'service_healthy' } });
  });
});
