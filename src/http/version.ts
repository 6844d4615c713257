// The package's version, apart from the OpenAPI pieces of src/http/docs.ts: `secinv --version` needs it without
// loading the schema library those pieces are built with.
import { readFileSync } from 'node:fs';

/**
 * The package's version, read once (an SBOM names it on every download). The same relative path from src/http (tests,
 * tsx) and dist/http (the built server).
 */
let version: string | undefined;
export const packageVersion = (): string =>
  (version ??= (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string })
    .version);
