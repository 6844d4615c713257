// Where `secinv feeds update` downloads from, apart from the loading code: the command line shows them in its help.
/** The public addresses of the three feeds (overridable by flags). */
export const FEED_URLS = {
  kev: 'https://www.cisa.gov/sites/default/files/feeds/known_exploited_vulnerabilities.json',
  epss: 'https://epss.empiricalsecurity.com/epss_scores-current.csv.gz',
  exploitdb: 'https://gitlab.com/exploit-database/exploitdb/-/raw/main/files_exploits.csv',
} as const;
