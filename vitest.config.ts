import { configDefaults, defineConfig } from 'vitest/config';

// The HTTP, import, CLI and database-backed ingest suites run once per database: the `sqlite` and `postgres` projects
// differ only in SECINV_TEST_DIALECT, which test/helpers.ts reads. Pure unit tests, the generator and the storage
// tests (which loop over both dialects themselves) run once. A test about one module sits in the folder of its module
// (test/domain/, test/http/, test/cli/…), so the pure ones in those folders are named in `dialectFree`.
const perDialect = [
  'test/http/**/*.test.ts',
  'test/client/client.test.ts',
  'test/client/scans.test.ts',
  'test/import/**/*.test.ts',
  'test/cli/**/*.test.ts',
  'test/ingest/trivy.test.ts',
  'test/ingest/limits.test.ts',
  'test/ingest/findings.test.ts',
  'test/ingest/grype.test.ts',
  'test/ingest/vex.test.ts',
  'test/ingest/kubernetes.test.ts',
  'test/ingest/prowler.test.ts',
  'test/ingest/misconfig.test.ts',
  'test/ingest/field-kubernetes.test.ts',
  'test/ingest/field.test.ts',
  'test/feeds/feeds.test.ts',
  'test/webhooks/**/*.test.ts',
];
/** Files under those folders that use no database: run once (`npm run check` runs them). */
const dialectFree = [
  'test/cli/startup.test.ts',
  'test/cli/completion.test.ts',
  'test/cli/memory.test.ts',
  'test/cli/progress.test.ts',
  'test/cli/render.test.ts',
  'test/cli/waiting-lines.test.ts',
  'test/http/csv-items.test.ts',
  'test/http/cursor.test.ts',
  'test/http/export.test.ts',
  'test/import/lines.test.ts',
  'test/webhooks/destinations.test.ts',
  'test/webhooks/readme-receiver.test.ts',
];
const perDialectExclude = [...configDefaults.exclude, ...dialectFree];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    globalSetup: ['test/global-setup.ts'],
    setupFiles: ['test/setup.ts'],
    hookTimeout: 60_000,
    // Worker threads that each run file after file, keeping the modules they loaded: loading the server, storage and
    // their packages again for every file cost ~2 s of a core per file, a third of the per-database projects' CPU
    // time. Each file opens and closes its own databases, servers and keys; files share the loaded code and its memos,
    // as the requests of one server do.
    pool: 'threads',
    isolate: false,
    // Four test files at a time, whatever the core count (vitest's default is one fewer than the cores: a single file
    // at a time on two). Most files spend their time waiting on PostgreSQL, child processes and sockets rather than
    // on a core; on two cores the suite takes about half the time it takes file by file. As many workers from the start
    // as at most: tinypool's retiring of idle ones ended unisolated runs with "Terminating worker thread".
    maxWorkers: 4,
    minWorkers: 4,
    projects: [
      {
        extends: true,
        test: {
          name: 'sqlite',
          include: perDialect,
          exclude: perDialectExclude,
          env: { SECINV_TEST_DIALECT: 'sqlite' },
        },
      },
      {
        extends: true,
        test: {
          name: 'postgres',
          include: perDialect,
          exclude: perDialectExclude,
          env: { SECINV_TEST_DIALECT: 'postgres' },
        },
      },
      {
        extends: true,
        test: {
          name: 'once',
          include: [
            // Pure tests, no database (with `dialectFree`; `npm run check` runs the quick ones of them).
            'test/domain/**/*.test.ts',
            'test/lint/**/*.test.ts',
            'test/scripts/**/*.test.ts',
            'test/config.test.ts',
            'test/docker.test.ts',
            'test/ingest/prowler-types.test.ts',
            'test/ingest/scan-thread.test.ts',
            'test/ingest/scan-runner.test.ts',
            'test/docs/**/*.test.ts',
            'test/settings-readme.test.ts',
            'test/generate/**/*.test.ts',
            'test/storage/**/*.test.ts',
            'test/input/**/*.test.ts',
            'test/lib/**/*.test.ts',
            'test/feeds/read.test.ts',
            'test/feeds/intel-flags.test.ts',
            'test/feeds/finding-intel.test.ts',
            'test/feeds/heap-only.test.ts',
            'test/feeds/risk-scope.test.ts',
            'test/feeds/older-feed.test.ts',
            'test/feeds/turns.test.ts',
            'test/client/transport.test.ts',
            ...dialectFree,
            'test/package/**/*.test.ts',
            // In Chromium, against a server on SQLite: once (the API under it is tested on both databases).
            'test/console/**/*.test.ts',
          ],
        },
      },
    ],
  },
});
