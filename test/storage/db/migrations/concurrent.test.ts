// Databases of one PostgreSQL cluster migrated at the same moment (a test suite, several servers starting at once)
// share the API role that migration 0002 creates and alters; PostgreSQL fails all but one of concurrent updates of
// that role with "tuple concurrently updated". Every one of them must still come up.
import { describe, expect, it } from 'vitest';
import { openStorage } from '../../../../src/storage/index.js';
import { createTestDatabase, TEST_DIALECTS } from '../../../helpers.js';

describe.runIf(TEST_DIALECTS.includes('postgres'))('migrations of several databases at once', () => {
  it('all succeed', async () => {
    const databases = await Promise.all([...Array(4).keys()].map(() => createTestDatabase('postgres')));
    try {
      const opened = await Promise.allSettled(databases.map((d) => openStorage(d.url)));
      const failures = opened.flatMap((o) => (o.status === 'rejected' ? [String(o.reason)] : []));
      for (const o of opened) if (o.status === 'fulfilled') await o.value.close();
      expect(failures).toEqual([]);
    } finally {
      await Promise.all(databases.map((d) => d.drop()));
    }
  });
});
