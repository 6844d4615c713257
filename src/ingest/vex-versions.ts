// The versions a CycloneDX VEX statement is limited to (`affects[].versions`, docs/INGEST.md "VEX"): a statement that
// lists versions speaks of those only. In an exempting statement (`not_affected`, `resolved`…) the versions marked
// `unaffected` are the ones it exempts; a version `affected` or `unknown` (the spec's default is `affected`) exempts
// nothing. Ranges are `vers` texts (src/domain/vers.ts); one of a scheme secinv cannot order exempts nothing and is
// said in the summary, never applied to every version.
import { parseVers } from '../domain/vers.js';
import { inVersions } from '../domain/vex.js';
import { objects, text, type Json } from '../input/json.js';
import type { FieldProblem } from './trivy.js';

export interface VersionScope {
  versions: string[];
  ranges: string[];
}

/**
 * The versions an `affects[]` entry limits its statement to: null when it lists none (the statement is about the ref
 * as it is), else the unaffected versions and ranges, possibly none. A malformed range is a problem; one of another
 * scheme, or an entry exempting nothing, a warning.
 */
export function versionScope(
  affect: Json,
  location: string,
  problems: FieldProblem[],
  warnings: string[],
): VersionScope | null {
  const entries = objects(affect.versions);
  if (entries.length === 0) return null;
  const scope: VersionScope = { versions: [], ranges: [] };
  entries.forEach((entry, i) => {
    if (text(entry.status) !== 'unaffected') return;
    const version = text(entry.version);
    const range = text(entry.range);
    if (version !== null) scope.versions.push(version);
    if (range === null) {
      if (version === null)
        problems.push({ path: `${location}.versions[${i}]`, message: 'must have a `version` or a `range`' });
      return;
    }
    const parsed = parseVers(range);
    if ('scheme' in parsed) scope.ranges.push(range);
    else if (parsed.unsupported === true)
      warnings.push(`${location}.versions[${i}].range ${parsed.problem}: that range exempts nothing`);
    else problems.push({ path: `${location}.versions[${i}].range`, message: parsed.problem });
  });
  if (scope.versions.length === 0 && scope.ranges.length === 0)
    warnings.push(`${location} lists no version secinv can take as unaffected: that statement exempts nothing`);
  return scope;
}

/**
 * Whether a statement limited to versions applies to the document's own subject: only when the subject names its
 * version and that version is listed. Without a version secinv cannot tell, and says so.
 */
export function scopeCoversSubject(
  scope: VersionScope,
  subjectVersion: string | null,
  location: string,
  warnings: string[],
): boolean {
  if (scope.versions.length === 0 && scope.ranges.length === 0) return false;
  if (subjectVersion === null) {
    warnings.push(
      `${location} limits the statement to versions of the document's subject, which names no version ` +
        '(`metadata.component.version`): it exempts nothing',
    );
    return false;
  }
  return inVersions(subjectVersion, scope);
}
