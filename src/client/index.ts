// The typed client of the Tenant Security Inventory API (`secinv/client`): one method per operation, iterators over
// every record of a list, a follower of the change log (changes.ts), retries of 429 and 503, typed errors. It needs nothing but Node's fetch: every import from
// the server's code below is a type import, erased at build. Parameter types come from the QuerySpecs the server
// parses with (src/domain/*.ts), record types from the TypeBox schemas it answers with, so the two cannot drift.
import type { Static } from 'typebox';
import type { Asset, getAssetSpec, listAssetsSpec } from '../domain/assets.js';
import type { QueryInput } from '../domain/query.js';
import type { Integration, listRisksSpec, Risk } from '../domain/risks.js';
import type { listVulnerabilitiesSpec, Vulnerability } from '../domain/vulnerabilities.js';
import type { PageMeta } from '../modules/assets/schemas.js';
import type { SbomLinkResponse } from '../modules/assets/sbom.js';
import type { CursorMeta } from '../modules/risks/schemas.js';
import type { FindingBatchMeta, FindingPageMeta } from '../modules/vulnerabilities/schemas.js';
import type { ScanRecord } from '../domain/scans.js';
import type { listScansSpec, uploadScanSpec } from '../modules/scans/schemas.js';
import {
  changesApi,
  scanChanges,
  type Change,
  type ChangeMeta,
  type ChangesApi,
  type ScanChangesParams,
} from './changes.js';
import { SecinvConnectionError } from './errors.js';
import { metricsApi, type MetricsApi } from './metrics.js';
import { createTransport, pause, type ClientOptions, type RawQuery } from './transport.js';

export { SecinvApiError, SecinvConnectionError, type ApiProblem } from './errors.js';
export { CHANGES_PATH } from './changes.js';
export { FINDING_METRICS_PATH, REMEDIATION_METRICS_PATH } from './metrics.js';
export type {
  FindingMetrics,
  FindingMetricsParams,
  MetricsApi,
  RemediationMetrics,
  RemediationMetricsParams,
} from './metrics.js';
export type {
  Change,
  ChangeAllParams,
  ChangeFeed,
  ChangeFollowOptions,
  ChangeListParams,
  ChangeMeta,
  ChangeReadOptions,
  ScanChangesParams,
} from './changes.js';
export type { ClientOptions } from './transport.js';
export type { Asset, Integration, Risk, Vulnerability };

export type PageMeta = Static<typeof PageMeta>;
export type CursorMeta = Static<typeof CursorMeta>;
export type FindingPageMeta = Static<typeof FindingPageMeta>;
export type FindingBatchMeta = Static<typeof FindingBatchMeta>;

export type RiskField = keyof Risk;
/** A risk of the list: the fields asked for (all without `fields`), and the embeds `include` asks for. */
export type RiskItem<F extends RiskField = RiskField> = Pick<Risk, F> & {
  primaryAsset?: Asset | null;
  integration?: Integration | null;
};
type RiskQuery = Omit<QueryInput<typeof listRisksSpec.params>, 'format' | 'fields'>;
export type RiskListParams<F extends RiskField = RiskField> = RiskQuery & { fields?: readonly F[] };
/** Every risk: the filters, sort, fields and include of a list; the client follows the cursors. */
export type RiskAllParams<F extends RiskField = RiskField> = Omit<RiskListParams<F>, 'cursor'>;
export type RiskExportParams<F extends RiskField = RiskField> = Omit<RiskListParams<F>, 'cursor' | 'perPage'>;

export type AssetListParams = Omit<QueryInput<typeof listAssetsSpec.params>, 'format'>;
export type AssetAllParams = Omit<AssetListParams, 'page'>;
export type AssetExportParams = Omit<AssetListParams, 'page' | 'perPage'>;
export type AssetGetParams = QueryInput<typeof getAssetSpec.params>;
export type AssetWithRawData = Asset & { rawData?: Record<string, unknown> };
/** A signed link to an asset's CycloneDX SBOM, fetched without a key until it expires, and the document's size. */
export type SbomLink = Static<typeof SbomLinkResponse>;

export type VulnerabilityListParams = Omit<QueryInput<typeof listVulnerabilitiesSpec.params>, 'format'>;
export type VulnerabilityAllParams = Omit<VulnerabilityListParams, 'page' | 'cursor' | 'includeTotal'>;
export type VulnerabilityExportParams = Omit<VulnerabilityAllParams, 'perPage'>;

/** A scan as the server answers it (pipeline.md §2). */
export type Scan = ScanRecord;
export type ScanUploadParams = QueryInput<typeof uploadScanSpec.params> & {
  /** Makes a retry of the same upload safe: within 24 h the server answers the scan it made (pipeline.md §2). */
  idempotencyKey?: string;
};
export type ScanListParams = QueryInput<typeof listScansSpec.params>;
export interface ScanWaitOptions {
  /** Give up after this long (a SecinvConnectionError marked timed out). Default: no limit. */
  timeoutMs?: number;
  /**
   * The longest wait between two looks at the scan: the first look is at once, the second 100 ms later, and each next
   * one twice as long after the one before, up to this. Default 500 ms.
   */
  intervalMs?: number;
}

export interface Page<T, M> {
  data: T[];
  meta: M;
}

/**
 * Every record of a list in one NDJSON download. Once the answer has arrived (after the first `next()`),
 * `changesCursor` is its `Secinv-Changes-Cursor` header: the change log's position of the snapshot the download was
 * read from, to follow the changes from (`changes.follow(changesCursor)`); undefined before, or from a server that
 * sends none.
 */
export interface Export<T> extends AsyncGenerator<T> {
  readonly changesCursor: string | undefined;
}

export const ASSETS_PATH = '/v1/tenant/assets';
export const RISKS_PATH = '/v1/tenant/risks';
export const VULNERABILITIES_PATH = '/v1/tenant/vulnerabilities';
export const SCANS_PATH = '/v1/tenant/scans';
/** Largest pages of the lists: the fewest requests for a walk over every record. */
const MAX_PER_PAGE = { assets: 1000, risks: 100, vulnerabilities: 2000 } as const;

export interface Client {
  assets: {
    /** One numbered page. */
    list(params?: AssetListParams): Promise<Page<Asset, PageMeta>>;
    /** Every asset, page after page. */
    all(params?: AssetAllParams): AsyncGenerator<Asset>;
    /** Every asset in one NDJSON download (one request; for servers that export). */
    export(params?: AssetExportParams): Export<Asset>;
    /** One asset by its id; `include: 'rawData'` adds its raw data. */
    get(id: string, params?: AssetGetParams): Promise<AssetWithRawData>;
    /** A signed link to the asset's SBOM (CycloneDX 1.6 JSON); `fetch(link.data.url)` downloads it, no key needed. */
    sbom(id: string): Promise<SbomLink>;
  };
  risks: {
    list<const F extends RiskField = RiskField>(params?: RiskListParams<F>): Promise<Page<RiskItem<F>, CursorMeta>>;
    all<const F extends RiskField = RiskField>(params?: RiskAllParams<F>): AsyncGenerator<RiskItem<F>>;
    export<const F extends RiskField = RiskField>(params?: RiskExportParams<F>): Export<RiskItem<F>>;
  };
  vulnerabilities: {
    list(params?: VulnerabilityListParams): Promise<Page<Vulnerability, FindingPageMeta | FindingBatchMeta>>;
    all(params?: VulnerabilityAllParams): AsyncGenerator<Vulnerability>;
    export(params?: VulnerabilityExportParams): Export<Vulnerability>;
  };
  /** The change log (pipeline.md §4): what every write changed, in order. */
  changes: ChangesApi;
  /** Remediation over time (pipeline.md §6). */
  metrics: MetricsApi;
  scans: {
    /** Uploads one report's bytes (a key with the `ingest` scope); the scan as queued, or as an earlier retry made it. */
    upload(report: Uint8Array, params?: ScanUploadParams): Promise<Scan>;
    get(id: string): Promise<Scan>;
    list(params?: ScanListParams): Promise<Page<Scan, { perPage: number; cursor: string | null }>>;
    /** Looks at the scan until it `succeeded` or `failed`, and returns it then. */
    wait(id: string, options?: ScanWaitOptions): Promise<Scan>;
    /** One batch of the changes the scan made (its diff), in log order; read on with `meta.cursor`. */
    changes(id: string, params?: ScanChangesParams): Promise<Page<Change, ChangeMeta>>;
  };
}

/** How long `scans.wait` waits before its second look at a scan (its first is at once). */
const FIRST_LOOK_MS = 100;

// The typed parameters are a subset of what the query string carries.
const raw = (params: object | undefined): RawQuery => (params ?? {}) as RawQuery;

export function createClient(options: ClientOptions): Client {
  if (!/^https?:\/\//i.test(options.baseUrl)) throw new TypeError(`baseUrl must be an http(s) URL: ${options.baseUrl}`);
  const http = createTransport(options);

  /** Follows `meta.cursor` from the first batch to the last. */
  async function* cursors<T>(path: string, query: RawQuery): AsyncGenerator<T> {
    let cursor: string | null | undefined;
    do {
      const page: Page<T, { cursor: string | null }> = await http.json(path, {
        ...query,
        ...(cursor ? { cursor } : {}),
      });
      yield* page.data;
      cursor = page.meta.cursor;
    } while (cursor);
  }

  /** An NDJSON download that keeps the change log position its answer names. */
  function download<T>(path: string, query: RawQuery): Export<T> {
    let changesCursor: string | undefined;
    const records = http.ndjson<T>(path, { ...query, format: 'ndjson' }, (headers) => {
      changesCursor = headers.get('secinv-changes-cursor') ?? undefined;
    });
    return Object.defineProperty(records, 'changesCursor', { get: () => changesCursor }) as Export<T>;
  }

  return {
    assets: {
      list: (params) => http.json(ASSETS_PATH, raw(params)),
      async *all(params) {
        const query = { perPage: MAX_PER_PAGE.assets, ...raw(params) };
        for (let page = 1; ; page += 1) {
          const answer: Page<Asset, PageMeta> = await http.json(ASSETS_PATH, { ...query, page });
          yield* answer.data;
          if (!answer.meta.hasNextPage) return;
        }
      },
      export: (params) => download(ASSETS_PATH, raw(params)),
      get: async (id, params) =>
        (await http.json<{ data: AssetWithRawData }>(`${ASSETS_PATH}/${encodeURIComponent(id)}`, raw(params))).data,
      sbom: (id) => http.json(`${ASSETS_PATH}/${encodeURIComponent(id)}/sbom`, {}),
    },
    risks: {
      list: (params) => http.json(RISKS_PATH, raw(params)),
      all: (params) => cursors(RISKS_PATH, { perPage: MAX_PER_PAGE.risks, ...raw(params) }),
      export: (params) => download(RISKS_PATH, raw(params)),
    },
    vulnerabilities: {
      list: (params) => http.json(VULNERABILITIES_PATH, raw(params)),
      // Without the count, which costs more than a batch on a large tenant.
      all: (params) =>
        cursors(VULNERABILITIES_PATH, { perPage: MAX_PER_PAGE.vulnerabilities, ...raw(params), includeTotal: false }),
      export: (params) => download(VULNERABILITIES_PATH, raw(params)),
    },
    scans: {
      async upload(report, params = {}) {
        const { idempotencyKey, ...query } = params;
        const answer = await http.post<{ data: Scan }>(SCANS_PATH, raw(query), report, {
          'content-type': 'application/octet-stream',
          ...(idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey }),
        });
        return answer.body.data;
      },
      get: async (id) => (await http.json<{ data: Scan }>(`${SCANS_PATH}/${encodeURIComponent(id)}`, {})).data,
      list: (params) => http.json(SCANS_PATH, raw(params)),
      async wait(id, { timeoutMs, intervalMs = 500 } = {}) {
        const until = timeoutMs === undefined ? Infinity : Date.now() + timeoutMs;
        // Soon first, then further apart: a CI job's small report is applied within tens of milliseconds.
        for (let pauseMs = Math.min(FIRST_LOOK_MS, intervalMs); ; pauseMs = Math.min(2 * pauseMs, intervalMs)) {
          const scan = await this.get(id);
          if (scan.status === 'succeeded' || scan.status === 'failed') return scan;
          if (Date.now() + pauseMs > until)
            throw new SecinvConnectionError(
              `scan ${id} is still ${scan.status} after ${timeoutMs} ms`,
              SCANS_PATH,
              true,
            );
          await pause(pauseMs);
        }
      },
      changes: (id, params) => scanChanges(http, SCANS_PATH, id, params),
    },
    changes: changesApi(http),
    metrics: metricsApi(http),
  };
}
