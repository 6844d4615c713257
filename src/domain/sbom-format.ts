// The SBOM's media type, apart from the builder (src/domain/sbom.ts): the routes declare it when the server starts,
// and the builder's CycloneDX library is loaded with the first SBOM asked for.
export const SBOM_MEDIA_TYPE = 'application/vnd.cyclonedx+json; version=1.6';
