import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/domain/errors.js';
import { cursorBinding, cursorCodec } from '../../src/http/cursor.js';

const codec = cursorCodec(randomBytes(32));
const binding = cursorBinding('/risks', 'tenant-a', {
  severityLevels: ['HIGH', 'CRITICAL'],
  sortBy: 'score',
  sortOrder: 'desc',
  perPage: 5,
});

const rejects = (cursor: string, b = binding) => {
  try {
    codec.decode(cursor, b, 1);
    return false;
  } catch (error) {
    return error instanceof ApiError && error.problems[0]?.code === 'invalid_cursor' && error.status === 400;
  }
};

describe('cursor codec', () => {
  it('round-trips positions with string and number sort values', () => {
    for (const position of [
      ['2024-01-01T00:00:00.000Z', 'risk-1'],
      [7.25, 'r'],
      [0, ''],
      [-1e-9, 'ünïcødé/id'],
    ] as const) {
      expect(codec.decode(codec.encode(position, binding), binding, 1)).toEqual(position);
    }
  });

  it('binds to the tenant and the normalised query, not to perPage or item order', () => {
    const cursor = codec.encode([1, 'x'], binding);
    expect(
      codec.decode(
        cursor,
        cursorBinding('/risks', 'tenant-a', {
          perPage: 100,
          sortOrder: 'desc',
          sortBy: 'score',
          severityLevels: ['CRITICAL', 'HIGH'],
        }),
        1,
      ),
    ).toEqual([1, 'x']);
    expect(
      rejects(
        cursor,
        cursorBinding('/risks', 'tenant-b', {
          severityLevels: ['HIGH', 'CRITICAL'],
          sortBy: 'score',
          sortOrder: 'desc',
        }),
      ),
    ).toBe(true);
    expect(
      rejects(
        cursor,
        cursorBinding('/risks', 'tenant-a', { severityLevels: ['HIGH'], sortBy: 'score', sortOrder: 'desc' }),
      ),
    ).toBe(true);
    expect(
      rejects(
        cursor,
        cursorBinding('/risks', 'tenant-a', {
          severityLevels: ['HIGH', 'CRITICAL'],
          sortBy: 'score',
          sortOrder: 'asc',
        }),
      ),
    ).toBe(true);
  });

  it('binds to the list, and not to the page, the total or the format', () => {
    const cursor = codec.encode([1, 'x'], binding);
    const query = { severityLevels: ['HIGH', 'CRITICAL'], sortBy: 'score', sortOrder: 'desc' };
    expect(rejects(cursor, cursorBinding('/vulnerabilities', 'tenant-a', query))).toBe(true);
    expect(
      codec.decode(
        cursor,
        cursorBinding('/risks', 'tenant-a', { ...query, page: 3, includeTotal: false, format: 'json' }),
        1,
      ),
    ).toEqual([1, 'x']);
  });

  it('carries keys of several strings and rejects a key of another length', () => {
    const position = [4, 'sirn:assets:a', 'CVE-2024-1'] as const;
    const cursor = codec.encode(position, binding);
    expect(codec.decode(cursor, binding, 2)).toEqual(position);
    expect(rejects(cursor)).toBe(true);
    expect(rejects(codec.encode([4, 'x'], binding), binding)).toBe(false);
    expect(() => codec.decode(codec.encode([4, 'x'], binding), binding, 2)).toThrow(ApiError);
  });

  it('rejects every single-character change of a cursor', () => {
    const cursor = codec.encode(['2024-01-01T00:00:00.000Z', 'risk-1'], binding);
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.=+/';
    let tried = 0;
    for (let i = 0; i < cursor.length; i += 1) {
      for (const c of alphabet) {
        if (c === cursor[i]) continue;
        tried += 1;
        expect(rejects(cursor.slice(0, i) + c + cursor.slice(i + 1)), `position ${i} → ${c}`).toBe(true);
      }
    }
    expect(tried).toBeGreaterThan(3000);
  });

  it('rejects cursors signed with another key and malformed ones', () => {
    const other = cursorCodec(randomBytes(32)).encode([1, 'x'], binding);
    for (const bad of [
      other,
      '',
      '.',
      'a.b',
      'a.b.c',
      `${codec.encode([1, 'x'], binding)}x`,
      'bm90IGpzb24.AAAAAAAAAAAAAAAAAAAAAA',
    ])
      expect(rejects(bad), bad).toBe(true);
  });
});
