// Writes the rule catalog of docs/RISKS.md (between its markers) from the rules and factors in src/domain/, so the
// document always says what the code does. test/domain/risk-rules.test.ts fails when the two differ.
//
//   node --import tsx scripts/write-risks-doc.ts
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CATALOG_END, CATALOG_START, renderCatalog } from '../src/domain/risk-catalog.js';

const FILE = fileURLToPath(new URL('../docs/RISKS.md', import.meta.url));
const text = readFileSync(FILE, 'utf8');
const start = text.indexOf(CATALOG_START);
const end = text.indexOf(CATALOG_END);
if (start < 0 || end < start) {
  process.stderr.write(`docs/RISKS.md: the catalog markers are missing:\n${CATALOG_START}\n${CATALOG_END}\n`);
  process.exit(1);
}
writeFileSync(FILE, `${text.slice(0, start + CATALOG_START.length)}\n\n${renderCatalog()}\n\n${text.slice(end)}`);
process.stderr.write('docs/RISKS.md: rule catalog written\n');
