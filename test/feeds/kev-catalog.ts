// A KEV catalog in CISA's JSON format listing the given CVEs, for tests that load one over generated findings.
export const kevCatalog = (version: string, ids: readonly string[]): string =>
  JSON.stringify({
    title: 'CISA Catalog of Known Exploited Vulnerabilities',
    catalogVersion: version,
    dateReleased: `${version.replace(/\./g, '-')}T15:00:00.000Z`,
    count: ids.length,
    vulnerabilities: ids.map((cveID) => ({
      cveID,
      vendorProject: 'Example',
      product: 'Server',
      vulnerabilityName: 'Example Server Input Validation',
      dateAdded: '2026-10-20',
      shortDescription: 'A test entry.',
      requiredAction: 'Apply updates per vendor instructions.',
      dueDate: '2026-11-10',
      knownRansomwareCampaignUse: 'Unknown',
      notes: '',
      cwes: [],
    })),
  });
