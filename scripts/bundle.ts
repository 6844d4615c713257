// The command line as it ships: src/cli/bin.ts and each worker thread it starts, bundled with their dependencies into
// files under dist/bundle/ (docs/DESIGN.md §83). Node spends most of a start loading modules file by file: `secinv
// serve` answered its first probe 1.60-2.06 s after its start from dist/'s hundreds of files and node_modules'
// thousands, and 0.92-1.08 s from the bundle. `npm run build` runs it after tsc, whose output stays for the typed
// client.
//
//   node --import tsx scripts/bundle.ts   # (re)write dist/bundle/
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';

/**
 * Output name → entry. The workers sit beside the command, as their built modules sit beside their callers in dist/
 * (src/lib/thread.ts finds `./read-worker.js` next to the module that starts it).
 */
export const BUNDLE_ENTRIES = {
  secinv: 'src/cli/bin.ts',
  'read-worker': 'src/import/read-worker.ts',
  'prepare-worker': 'src/ingest/prepare-worker.ts',
  'risk-worker': 'src/storage/derive/risks/risk-worker.ts',
  'scan-worker': 'src/ingest/scan-worker.ts',
  'webhook-worker': 'src/webhooks/webhook-worker.ts',
} as const;

/**
 * Packages loaded from node_modules as they are: a native addon, and packages that find files of their own beside
 * their code (by `__dirname`), which a bundle would move away from them. The bundle imports them from dist/bundle/, so
 * each is a direct dependency of the package (npm installs those at the top of node_modules), even pino, which only
 * Fastify imports; pg-native is the exception, an optional addon pg loads only when asked for it.
 */
export const BUNDLE_EXTERNAL = [
  // Native: better-sqlite3 finds its compiled addon by its own path; pg-native is pg's optional addon, not installed.
  'better-sqlite3',
  'pg-native',
  // Their package.json, the documentation page's files, the files they serve.
  '@fastify/swagger',
  '@fastify/swagger-ui',
  '@fastify/static',
  // Its JSON schemas, and optional XML plugins it requires by name.
  '@cyclonedx/cyclonedx-library',
  // The worker files of its transports.
  'pino',
];

/** Lines of the bundle that use `__dirname` or `__filename` in code (not in a comment). */
export function fileRelativeLines(code: string): string[] {
  return code.split('\n').filter((line) => /\b__(dirname|filename)\b/.test(line) && !/^\s*(\*|\/\/|\/\*)/.test(line));
}

/**
 * Writes the bundles into `outdir`, emptied first (chunk names carry a hash of their code, so an earlier build's chunks
 * would otherwise stay beside these, shipped and fingerprinted), from the sources under `root`. CommonJS packages
 * inside an ES module need a `require` of their own, which the banner gives each file. A package that finds its files
 * by `__dirname` would fail only when it looks for them, so the build fails instead, naming the file and line: such a
 * package belongs in `external`.
 */
export async function bundleCli(
  outdir: string,
  root = process.cwd(),
  external: readonly string[] = BUNDLE_EXTERNAL,
): Promise<void> {
  rmSync(outdir, { recursive: true, force: true });
  await build({
    absWorkingDir: root,
    entryPoints: Object.entries(BUNDLE_ENTRIES).map(([out, entry]) => ({ in: entry, out })),
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outdir,
    // The command loads each command's modules when it runs (src/cli/main.ts, docs/DESIGN.md §79): each dynamic
    // import stays a file of its own, code that several share a chunk, all of them beside the entries.
    splitting: true,
    chunkNames: 'chunk-[hash]',
    external: [...external],
    banner: {
      js: "import { createRequire as secinvCreateRequire } from 'node:module';\nconst require = secinvCreateRequire(import.meta.url);",
    },
    tsconfig: join(root, 'tsconfig.build.json'),
    logLevel: 'warning',
  });
  // Every file: most of the code is in the chunks, not in the entries.
  const files = readdirSync(outdir).filter((name) => name.endsWith('.js'));
  for (const file of files.sort()) {
    const lines = fileRelativeLines(readFileSync(join(outdir, file), 'utf8'));
    if (lines.length > 0)
      throw new Error(`${file} finds files by its own path (add its package to BUNDLE_EXTERNAL):\n${lines.join('\n')}`);
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href)
  await bundleCli('dist/bundle');
