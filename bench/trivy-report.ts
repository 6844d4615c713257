// Generated Trivy image reports for the ingest and scan benchmarks, written to a file as they are made (a report of a
// gigabyte is never held in memory). Findings in Results of 1,000, as a large image with many language packages has
// them. `lean` findings are bench/ingest.ts's since its first runs; `full` ones carry what Trivy writes for a
// finding of a package from the NVD (its identifiers, layer, data source, vendor severities, two CVSS sources,
// dates and a dozen references), about 2.5 KB each.
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';

export interface TrivyReport {
  /** The image's name and the hex digit its digests repeat: another pair is another image, another asset. */
  app: string;
  digit: string;
  findings: number;
  shape: 'lean' | 'full';
}

const SEVERITIES = ['CRITICAL', 'HIGH', 'MEDIUM', 'LOW', 'UNKNOWN'];

/** The report's text up to its first Result. */
export const trivyHeader = ({ app, digit }: Pick<TrivyReport, 'app' | 'digit'>): string =>
  `{"SchemaVersion":2,"CreatedAt":"2026-11-01T00:00:00Z","ArtifactName":"123456789012.dkr.ecr.us-east-1.amazonaws.com/bench/${app}:1.0","ArtifactType":"container_image","Metadata":{"OS":{"Family":"debian","Name":"12.5"},"ImageID":"sha256:${digit.repeat(64)}","RepoDigests":["123456789012.dkr.ecr.us-east-1.amazonaws.com/bench/${app}@sha256:${digit.repeat(64)}"]},"Results":[`;

function finding(i: number, shape: TrivyReport['shape']): Record<string, unknown> {
  const id = `CVE-${2000 + (i % 25)}-${100000 + i}`;
  const lib = `lib${i % 3000}`;
  const lean = {
    VulnerabilityID: id,
    PkgName: `org.example:${lib}`,
    PkgPath: `app/libs/${lib}.jar`,
    InstalledVersion: '1.2.3',
    FixedVersion: i % 3 === 0 ? '1.2.4' : undefined,
    SeveritySource: 'nvd',
    PrimaryURL: `https://avd.aquasec.com/nvd/${id.toLowerCase()}`,
    Title: `Example library ${i % 3000}: a flaw in request parsing`,
    Description: 'A flaw in request parsing lets a remote attacker cause a denial of service. '.repeat(3),
    Severity: SEVERITIES[i % SEVERITIES.length],
    CweIDs: ['CWE-400'],
    CVSS: { nvd: { V3Vector: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:N/I:N/A:H', V3Score: 7.5 } },
  };
  if (shape === 'lean') return lean;
  return {
    ...lean,
    PkgID: `org.example:${lib}:1.2.3`,
    PkgIdentifier: { PURL: `pkg:maven/org.example/${lib}@1.2.3`, UID: (i * 2654435761).toString(16).padStart(16, '0') },
    Status: i % 3 === 0 ? 'fixed' : 'affected',
    Layer: { Digest: `sha256:${(i % 7).toString().repeat(64)}`, DiffID: `sha256:${(i % 5).toString().repeat(64)}` },
    DataSource: {
      ID: 'ghsa',
      Name: 'GitHub Security Advisory Maven',
      URL: 'https://github.com/advisories?query=type%3Areviewed+ecosystem%3Amaven',
    },
    Description:
      `In org.example:${lib} before 1.2.4, a flaw in the parsing of chunked request bodies lets a remote, ` +
      'unauthenticated attacker exhaust the memory of the server by sending a body whose declared chunk sizes ' +
      'overflow. The issue affects every application that accepts requests through the library. '.repeat(3) +
      'Users are advised to upgrade to version 1.2.4, which fixes the issue.',
    VendorSeverity: { ghsa: 3, nvd: 3, redhat: 2, ubuntu: 2 },
    CVSS: {
      ghsa: { V3Vector: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:N/I:N/A:H', V3Score: 7.5 },
      nvd: {
        V2Vector: 'AV:N/AC:L/Au:N/C:N/I:N/A:P',
        V3Vector: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:N/I:N/A:H',
        V2Score: 5,
        V3Score: 7.5,
      },
      redhat: { V3Vector: 'CVSS:3.1/AV:N/AC:H/PR:N/UI:N/S:U/C:N/I:N/A:H', V3Score: 5.9 },
    },
    References: [
      `https://access.redhat.com/security/cve/${id}`,
      `https://github.com/advisories/GHSA-${(i % 9973).toString(36).padStart(4, '0')}-bench-0000`,
      `https://github.com/example/${lib}/commit/${(i * 40503).toString(16).padStart(40, '0')}`,
      `https://github.com/example/${lib}/issues/${1000 + (i % 9000)}`,
      `https://github.com/example/${lib}/pull/${2000 + (i % 8000)}`,
      `https://github.com/example/${lib}/releases/tag/v1.2.4`,
      `https://lists.debian.org/debian-lts-announce/2026/10/msg000${i % 10}.html`,
      `https://nvd.nist.gov/vuln/detail/${id}`,
      `https://security.netapp.com/advisory/ntap-2026${(i % 1000).toString().padStart(4, '0')}-0001/`,
      `https://ubuntu.com/security/notices/USN-${6000 + (i % 999)}-1`,
      `https://www.cve.org/CVERecord?id=${id}`,
      `https://www.openwall.com/lists/oss-security/2026/10/${(i % 28) + 1}/1`,
    ],
    PublishedDate: '2026-10-01T12:15:10.123Z',
    LastModifiedDate: '2026-10-15T18:03:44.987Z',
  };
}

/** Bytes a finding of this shape takes, about: to size a report by bytes. */
export const findingBytes = (shape: TrivyReport['shape']): number => JSON.stringify(finding(12345, shape)).length + 1;

/** Writes the report to `path`; resolves with the bytes written. */
export async function writeTrivyReport(path: string, report: TrivyReport): Promise<number> {
  const out = createWriteStream(path);
  let bytes = 0;
  const write = async (text: string) => {
    bytes += Buffer.byteLength(text);
    if (!out.write(text)) await once(out, 'drain');
  };
  await write(trivyHeader(report));
  for (let r = 0; r * 1000 < report.findings; r += 1) {
    await write(`${r ? ',' : ''}{"Target":"app/lib${r}","Class":"lang-pkgs","Type":"jar","Vulnerabilities":[`);
    for (let i = r * 1000; i < Math.min(report.findings, (r + 1) * 1000); i += 1)
      await write(`${i % 1000 ? ',' : ''}${JSON.stringify(finding(i, report.shape))}`);
    await write(']}');
  }
  await write(']}');
  out.end();
  await once(out, 'finish');
  return bytes;
}
