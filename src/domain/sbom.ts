// The SBOM of an asset (extensions.md §3): CycloneDX 1.6 JSON with the asset as `metadata.component`, one component per
// package known for it, and its findings as `vulnerabilities`. Built with the CycloneDX library's document model and
// serialiser, so the output is the format's own and not a hand-written look-alike of it.
import { Enums, Models, Serialize, Spec } from '@cyclonedx/cyclonedx-library';
import type { Asset } from './assets.js';
import type { Vulnerability } from './vulnerabilities.js';

/** A package of the asset: from a finding's package (with the purl a scanner gave, when it gave one). */
export interface SbomPackage {
  name: string;
  version: string | null;
  purl: string | null;
  /** Where the scanner found it (a layer, a lock file, an OS): Trivy's target, Grype's location. */
  targetName: string | null;
  targetType: string | null;
  targetPath: string | null;
}

export interface SbomInput {
  asset: Asset;
  /** The asset's findings as the API returns them, exempted ones included. */
  findings: readonly Vulnerability[];
  /** The purl of each finding's package, by `vulnerabilityId` and the package's position in `packages`. */
  purlOf: (vulnerabilityId: string, position: number) => string | null;
  /** A UUID that names this BOM (the same inventory state gives the same one). */
  serialNumber: string;
  timestamp: Date;
  toolVersion: string;
}

const severities: Record<Vulnerability['severityLevel'], Enums.Vulnerability.Severity> = {
  CRITICAL: Enums.Vulnerability.Severity.Critical,
  HIGH: Enums.Vulnerability.Severity.High,
  MEDIUM: Enums.Vulnerability.Severity.Medium,
  LOW: Enums.Vulnerability.Severity.Low,
  INFORMATIONAL: Enums.Vulnerability.Severity.Info,
  UNKNOWN: Enums.Vulnerability.Severity.Unknown,
};

/** Images are containers; any other cloud or cluster resource is the platform its packages run on. */
const assetComponentType = (asset: Asset): Enums.ComponentType =>
  /Image$/.test(asset.type) ? Enums.ComponentType.Container : Enums.ComponentType.Platform;

/** One component per distinct package: the purl names it when known, else its name, version and where it was found. */
const packageKey = (p: SbomPackage): string =>
  p.purl ?? JSON.stringify([p.name, p.version, p.targetName, p.targetType, p.targetPath]);

/** The finding's package at `position` as an SBOM package; undefined when the scanner gave it no name. */
function packageAt(finding: Vulnerability, position: number, purlOf: SbomInput['purlOf']): SbomPackage | undefined {
  const p = finding.packages[position];
  if (!p?.packageName) return undefined;
  return {
    name: p.packageName,
    version: p.installedVersion,
    purl: purlOf(finding.vulnerabilityId, position),
    targetName: p.targetName,
    targetType: p.targetType,
    targetPath: p.targetPath,
  };
}

/** The packages of the findings, each once, in a stable order. */
export function packagesOf(input: Pick<SbomInput, 'findings' | 'purlOf'>): Map<string, SbomPackage> {
  const packages = new Map<string, SbomPackage>();
  for (const finding of input.findings) {
    for (let position = 0; position < finding.packages.length; position++) {
      const found = packageAt(finding, position, input.purlOf);
      if (found && !packages.has(packageKey(found))) packages.set(packageKey(found), found);
    }
  }
  return new Map([...packages].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

const property = (name: string, value: string) => new Models.Property(name, value);

function assetComponent(asset: Asset): Models.Component {
  const component = new Models.Component(assetComponentType(asset), asset.name ?? asset.id, { bomRef: asset.id });
  component.properties.add(property('secinv:asset:id', asset.id));
  component.properties.add(property('secinv:asset:type', asset.type));
  component.properties.add(property('secinv:asset:provider', asset.provider));
  return component;
}

function packageComponent(p: SbomPackage, bomRef: string): Models.Component {
  const component = new Models.Component(Enums.ComponentType.Library, p.name, {
    bomRef,
    ...(p.version ? { version: p.version } : {}),
    ...(p.purl ? { purl: p.purl } : {}),
  });
  if (p.targetName) component.properties.add(property('secinv:package:target', p.targetName));
  if (p.targetType) component.properties.add(property('secinv:package:targetType', p.targetType));
  if (p.targetPath) component.properties.add(property('secinv:package:path', p.targetPath));
  return component;
}

function vulnerability(
  finding: Vulnerability,
  refOf: (position: number) => Models.BomRef | undefined,
): Models.Vulnerability.Vulnerability {
  const v = new Models.Vulnerability.Vulnerability({
    bomRef: `${finding.vulnerabilityId}@${finding.assetId}`,
    id: finding.vulnerabilityId,
    ...(finding.description ? { description: finding.description } : {}),
    ...(finding.title && finding.title !== finding.description ? { detail: finding.title } : {}),
    ...(finding.publishedDate ? { published: new Date(finding.publishedDate) } : {}),
  });
  if (finding.severitySource || finding.primaryUrl) {
    v.source = new Models.Vulnerability.Source({
      ...(finding.severitySource ? { name: finding.severitySource } : {}),
      ...(finding.primaryUrl ? { url: finding.primaryUrl } : {}),
    });
  }
  v.ratings.add(
    new Models.Vulnerability.Rating({
      severity: severities[finding.severityLevel],
      ...(finding.severitySource ? { source: new Models.Vulnerability.Source({ name: finding.severitySource }) } : {}),
    }),
  );
  for (const cwe of finding.cwes) {
    const n = Number(/^CWE-(\d+)$/.exec(cwe.cweId ?? cwe.id ?? '')?.[1]);
    if (Number.isSafeInteger(n) && n > 0) v.cwes.add(n);
  }
  const fixes: string[] = [];
  finding.packages.forEach((p, position) => {
    const ref = refOf(position);
    if (!ref) return;
    v.affects.add(
      new Models.Vulnerability.Affect(ref, {
        versions: p.installedVersion
          ? new Models.Vulnerability.AffectedVersionRepository([
              new Models.Vulnerability.AffectedSingleVersion(p.installedVersion, {
                status: Enums.Vulnerability.AffectStatus.Affected,
              }),
            ])
          : undefined,
      }),
    );
    if (p.fixedVersion) fixes.push(`Upgrade ${p.packageName} to ${p.fixedVersion}.`);
  });
  if (fixes.length > 0) v.recommendation = [...new Set(fixes)].join(' ');
  if (finding.hasKev) v.properties.add(property('secinv:hasKev', 'true'));
  if (finding.hasExploit) v.properties.add(property('secinv:hasExploit', 'true'));
  for (const { exemptionId } of finding.exemptions) v.properties.add(property('secinv:exemption', exemptionId));
  return v;
}

/** The CycloneDX 1.6 JSON text of the asset's SBOM; null when no package is known for the asset. */
export function buildSbom(input: SbomInput): string | null {
  const packages = packagesOf(input);
  if (packages.size === 0) return null;

  const bom = new Models.Bom({ version: 1, serialNumber: `urn:uuid:${input.serialNumber}` });
  bom.metadata.timestamp = input.timestamp;
  bom.metadata.component = assetComponent(input.asset);
  bom.metadata.tools.components.add(
    new Models.Component(Enums.ComponentType.Application, 'secinv', { version: input.toolVersion }),
  );
  const components = new Map<string, Models.Component>();
  let n = 0;
  for (const [key, p] of packages) {
    // A purl is the natural reference; packages without one are numbered (bom-refs must be unique in the document).
    const component = packageComponent(p, p.purl && !components.has(p.purl) ? p.purl : `package-${++n}`);
    components.set(key, component);
    bom.components.add(component);
  }
  for (const finding of input.findings) {
    bom.vulnerabilities.add(
      vulnerability(finding, (position) => {
        const p = packageAt(finding, position, input.purlOf);
        return p && components.get(packageKey(p))?.bomRef;
      }),
    );
  }
  const serializer = new Serialize.JsonSerializer(new Serialize.JSON.Normalize.Factory(Spec.Spec1dot6));
  return serializer.serialize(bom, { sortLists: true, space: 0 });
}
