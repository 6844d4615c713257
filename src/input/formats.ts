// The report formats `secinv ingest --format` names, apart from the code that tells them apart (src/input/detect.ts):
// the command line lists them in its help without loading the JSON tokeniser.
export const ingestFormats = [
  'trivy',
  'trivy-k8s',
  'trivy-operator',
  'grype',
  'cyclonedx',
  'openvex',
  'prowler-ocsf',
] as const;
export type IngestFormat = (typeof ingestFormats)[number];
