// Feed files read without a database: the real samples, gzip, and every kind of bad input with its line or JSON path.
import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { readFeed, type FeedRead } from '../../src/feeds/read.js';
import type { FeedData } from '../../src/domain/intel.js';

const real = (path: string) => readFileSync(new URL(`../fixtures/ingest/${path}`, import.meta.url));
const read = (content: string | Buffer, name = 'feed'): Promise<FeedRead> =>
  readFeed({ name, open: () => Readable.from([Buffer.from(content)]) });
const data = async (content: string | Buffer, name?: string): Promise<FeedData> => {
  const result = await read(content, name);
  if ('problems' in result) throw new Error(result.problems.join('; '));
  return result.data;
};
const problems = async (content: string | Buffer): Promise<string[]> => {
  const result = await read(content);
  return 'problems' in result ? result.problems : [];
};

describe('the real feed samples', () => {
  it('KEV: every entry with the API fields and the two kept aside; `\\/` unescaped, dates as given', async () => {
    const kev = await data(real('kev/known_exploited_vulnerabilities.2025.01.24.excerpt.json'));
    expect(kev.feed).toBe('kev');
    expect(kev.version).toBe('2025.01.24');
    if (kev.feed !== 'kev') return;
    // The excerpt rewrote `count` to 303; entries are counted, never read from `count`.
    expect(kev.entries).toHaveLength(303);
    expect(kev.entries.find((e) => e.cveID === 'CVE-2021-44228')).toMatchObject({
      vendorProject: 'Apache',
      product: 'Log4j2',
      dateAdded: '2021-12-10',
      knownRansomwareCampaignUse: 'Known',
    });
    expect(kev.entries[0]).toMatchObject({
      cveID: 'CVE-2025-23006',
      dueDate: '2025-02-14',
      notes:
        'https://psirt.global.sonicwall.com/vuln-detail/SNWLID-2025-0002 ; https://nvd.nist.gov/vuln/detail/CVE-2025-23006',
      cwes: ['CWE-502'],
    });
  });

  it('EPSS: the model and score date from the comment line; every row', async () => {
    const epss = await data(real('epss/epss_scores-2026-09-29.excerpt-a.csv'));
    expect(epss.version).toBe('2026-09-29 (model v2026.06.15)');
    if (epss.feed !== 'epss') return;
    expect(epss.entries).toHaveLength(71);
    expect(epss.entries[0]).toEqual({ cveId: 'CVE-1999-0001', epss: 0.03351, percentile: 0.88255 });
  });

  it('each feed saved as UTF-16 or with a byte order mark reads as its UTF-8 original', async () => {
    for (const path of [
      'kev/known_exploited_vulnerabilities.2025.01.24.excerpt.json',
      'epss/epss_scores-2026-09-29.excerpt-a.csv',
      'exploitdb/files_exploits.excerpt-a.csv',
    ]) {
      const original = await data(real(path));
      const text = real(path).toString('utf8');
      const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
      expect(await data(utf16)).toEqual(original);
      expect(await data(Buffer.from(`\uFEFF${text}`))).toEqual(original);
    }
  });

  it('EPSS without the comment line takes its date from the file name; gzip is read as such', async () => {
    const epss = await data(
      gzipSync('cve,epss,percentile\nCVE-2023-0795,0.0004,0.1\n'),
      'epss_scores-2026-10-01.csv.gz',
    );
    expect(epss).toMatchObject({ feed: 'epss', version: '2026-10-01', entries: [{ cveId: 'CVE-2023-0795' }] });
  });

  it('Exploit-DB: one entry per (CVE, exploit), duplicates (one row per tag) once, OSVDB codes ignored', async () => {
    const edb = await data(real('exploitdb/files_exploits.excerpt-a.csv'));
    expect(edb.feed).toBe('exploitdb');
    if (edb.feed !== 'exploitdb') return;
    expect(edb.entries).toHaveLength(24);
    expect(edb.entries.filter((e) => e.cveId === 'CVE-2021-44228').map((e) => e.exploit.id)).toEqual([
      '50592',
      '50590',
    ]);
    expect(edb.entries.find((e) => e.exploit.id === '50592')?.exploit).toEqual({
      id: '50592',
      title: 'Apache Log4j 2 - Remote Code Execution (RCE)',
      description: 'remote/java, published 2021-12-14, not verified',
      source: 'Exploit-DB',
      sourceUrl: 'https://www.exploit-db.com/exploits/50592',
    });
    expect(new Set(edb.entries.map((e) => `${e.cveId} ${e.exploit.id}`)).size).toBe(24);
  });
});

describe('bad feed files: a problem naming the line or JSON path', () => {
  it('an empty file, a binary file, random text', async () => {
    expect(await problems('')).toEqual(['is empty']);
    expect(await problems(Buffer.from([0x00, 0x01, 0x02, 0xff]))).toEqual(['is a binary file, not a feed']);
    expect(await problems('hello\n')).toEqual([
      'is not a feed secinv reads (a CISA KEV catalog JSON, a FIRST EPSS CSV or Exploit-DB files_exploits.csv)',
    ]);
  });

  it('a scanner report is sent to `secinv ingest`', async () => {
    expect(await problems(real('trivy/trivy-repo-npm.json'))).toEqual([
      'is a trivy report, not a feed: load it with `secinv ingest`',
    ]);
  });

  it('KEV: truncated JSON, a wrong shape, an entry without a CVE id or with a bad date', async () => {
    const truncated = await problems('{"catalogVersion": "1", "vulnerabilities": [{"cveID": "CVE-2024-0001"');
    expect(truncated).toHaveLength(1);
    expect(truncated[0]).toMatch(/^CISA KEV catalog: .*\$\.vulnerabilities\[0\]/);
    expect(await problems('{"catalogVersion": "1", "vulnerabilities": "none"}')).toEqual([
      '$.vulnerabilities: must be an array of entries',
    ]);
    expect(await problems('{"catalogVersion": "1"}')).toEqual(['$.vulnerabilities: must be an array of entries']);
    expect(
      await problems(
        '{"catalogVersion": "1", "vulnerabilities": [{"cveID": "CVE-2024-0001"}, {"product": "x"}, 7, {"cveID": "CVE-2024-0002", "dateAdded": "yesterday"}]}',
      ),
    ).toEqual([
      '$.vulnerabilities[1].cveID: must be a CVE id (CVE-yyyy-nnnn), not null',
      '$.vulnerabilities[2]: must be an object',
      '$.vulnerabilities[3].dateAdded: must be a date (yyyy-MM-dd), not "yesterday"',
    ]);
    expect(await problems('[{"cveID": "CVE-2024-0001"}]')).toEqual(['$: must be an object (a CISA KEV catalog)']);
  });

  it('EPSS: rows without their header, a wrong header, a bad row', async () => {
    expect(await problems('CVE-2024-0001,0.5,0.9\n')).toEqual([
      'looks like EPSS scores without their header line `cve,epss,percentile`',
    ]);
    expect(await problems('#model_version:v1,score_date:2026-01-01T00:00:00Z\ncve,score\nCVE-2024-0001,0.5\n')).toEqual(
      ['line 2: the header must be `cve,epss,percentile`, not `cve,score`'],
    );
    expect(
      await problems(
        '#model_version:v1\ncve,epss,percentile\nCVE-2024-0001,0.5,0.9\nGHSA-1,0.1,0.1\nCVE-2024-0002,2,0.5\n',
      ),
    ).toEqual(['line 4: `GHSA-1` is not a CVE id', 'line 5: epss must be from 0 to 1']);
    // A CVE id is a key of the feed tables: one of 3,000 digits is no CVE id, on either database.
    const long = `CVE-2024-${'1234567890'.repeat(300)}`;
    expect(await problems(`cve,epss,percentile\nCVE-2024-${'9'.repeat(19)},0.1,0.1\n${long},0.1,0.1\n`)).toEqual([
      `line 3: \`${long}\` is not a CVE id`,
    ]);
  });

  it('Exploit-DB: a header without the needed columns, a bad id, a broken quote', async () => {
    expect(await problems('id,file,description,codes\n1,a,b,CVE-2024-0001\n')).toEqual([
      'line 1: the header has no column `date_published`, `type`, `platform`, `verified`',
    ]);
    const header =
      'id,file,description,date_published,author,type,platform,port,date_added,date_updated,verified,codes';
    expect(
      await problems(`${header}\nx1,f,d,2026-01-01,a,remote,linux,,2026-01-01,2026-01-01,1,CVE-2024-0001\n`),
    ).toEqual(['line 2: id must be an Exploit-DB number, not `x1`']);
    // A row's line is the one its record ends on, counting comments, empty lines and newlines inside quotes.
    expect(
      await problems(
        `${header}\n# a comment\n\n1,f,"two\nlines",2026-01-01,a,remote,linux,,2026-01-01,2026-01-01,1,CVE-2024-0001\n` +
          `\nx2,f,d,2026-01-01,a,remote,linux,,2026-01-01,2026-01-01,1,CVE-2024-0002\n` +
          `3,f,"three\nmore\nlines",2026-01-01,a,remote,linux,,2026-01-01,2026-01-01,1,CVE-2024-0003\n` +
          `x4,f,d,2026-01-01,a,remote,linux,,2026-01-01,2026-01-01,1,CVE-2024-0004\n`,
      ),
    ).toEqual([
      'line 7: id must be an Exploit-DB number, not `x2`',
      'line 11: id must be an Exploit-DB number, not `x4`',
    ]);
    const broken = await problems(
      `${header}\n1,f,"unclosed,2026-01-01,a,remote,linux,,2026-01-01,2026-01-01,1,CVE-2024-0001\n`,
    );
    expect(broken).toHaveLength(1);
    expect(broken[0]).toMatch(/^line \d+: not valid CSV: /);
  });

  it('broken gzip is a problem of the file, not a crash', async () => {
    const gz = gzipSync('cve,epss,percentile\n' + 'CVE-2024-0001,0.5,0.9\n'.repeat(1000));
    await expect(read(gz.subarray(0, gz.length - 20))).rejects.toMatchObject({ code: expect.stringMatching(/^Z_/) });
  });
});
