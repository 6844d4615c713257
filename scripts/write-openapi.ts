// Writes openapi.json at the repository root: the OpenAPI document the server generates at /openapi.json, from the
// same schemas that validate the requests. Run after changing a route, a query definition or a resource schema:
//
//   node --import tsx scripts/write-openapi.ts           # (re)write openapi.json
//   node --import tsx scripts/write-openapi.ts --check   # exit 1 if openapi.json is out of date (CI)
//
// The app is built against a temporary, empty SQLite database (the document does not depend on the data or dialect).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildApp } from '../src/app.js';
import { openApiText } from '../src/modules/openapi/routes.js';
import { openStorage } from '../src/storage/index.js';

const OPENAPI_FILE = fileURLToPath(new URL('../openapi.json', import.meta.url));

/** The document text, from an app built on a throwaway database. */
async function generateOpenApi(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'secinv-openapi-'));
  try {
    const storage = await openStorage(`sqlite:${join(dir, 'openapi.db')}`);
    try {
      const app = await buildApp({ storage });
      try {
        await app.ready();
        return openApiText(app);
      } finally {
        await app.close();
      }
    } finally {
      await storage.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const text = await generateOpenApi();
if (process.argv.includes('--check')) {
  let committed: string | undefined;
  try {
    committed = readFileSync(OPENAPI_FILE, 'utf8');
  } catch {
    committed = undefined;
  }
  if (committed !== text) {
    process.stderr.write(
      'openapi.json is out of date: run `node --import tsx scripts/write-openapi.ts` and commit it\n',
    );
    process.exitCode = 1;
  }
} else {
  writeFileSync(OPENAPI_FILE, text);
  process.stderr.write(`wrote ${OPENAPI_FILE}\n`);
}
