// Deterministic, realistic inventory generator behind `secinv generate` and `secinv demo` (format: docs/IMPORT.md).
//
// Output is NDJSON import records, per tenant in dependency order: tenant, environments, integrations, assets (each
// followed by its findings), asset groups, exemptions, risks. Nothing is kept per asset: every asset is a pure
// function of (seed, tenant index, asset index), so later records (groups, exemptions, risks) recompute the assets
// they point at instead of remembering them. That keeps memory flat for any inventory size, and makes the same
// options produce byte-identical output (no Math.random, no clock: `now` is fixed unless given).
import { once } from 'node:events';
import { settingsOf, type GenerateOptions } from './settings.js';
import { buildTenant } from './tenants.js';
import { assetCore } from './identity.js';
import { buildAsset } from './assets.js';
import { buildPools, findingsOf } from './findings.js';
import { buildExemptions, buildGroups } from './exemptions.js';
import { buildRisk } from './risks.js';

// The files split the work by what they generate, each importing only those above it in this list: settings,
// tenants, names, identity, raw-data, assets, findings, exemptions (and groups), risks, history (the demo's scans).
export { ASSET_ID_PREFIX, DEFAULT_NOW, SHARED_ASSET_IDS, type GenerateOptions } from './settings.js';

const line = (kind: string, record: unknown): string => JSON.stringify({ kind, record });

/** One NDJSON line per record, without the newline, tenant by tenant in dependency order (see the file header). */
export function* generateRecords(opts: GenerateOptions): Generator<string> {
  const s = settingsOf(opts);
  const pools = buildPools(s);
  for (let t = 0; t < s.tenants; t++) {
    const tenant = buildTenant(s, t);
    yield line('tenant', { tenantId: tenant.tenantId, organizationId: tenant.organizationId, name: tenant.name });
    for (const env of tenant.environments) {
      yield line('environment', {
        tenantId: tenant.tenantId,
        organizationId: tenant.organizationId,
        environmentId: env.environmentId,
        name: env.name,
        isProduction: env.isProduction,
      });
    }
    for (const integration of tenant.integrations) yield line('integration', integration.record);
    for (let i = 0; i < s.assets; i++) {
      const asset = buildAsset(s, tenant, assetCore(s, tenant, i));
      yield line('asset', asset.record);
      for (const finding of findingsOf(s, pools, tenant, asset)) yield line('vulnerability', finding);
    }
    const groups = buildGroups(s, tenant);
    for (const group of groups) {
      yield line('assetGroup', {
        tenantId: tenant.tenantId,
        organizationId: tenant.organizationId,
        assetGroupId: group.assetGroupId,
        name: group.name,
        assetIds: group.members.map((i) => assetCore(s, tenant, i).id),
      });
    }
    for (const exemption of buildExemptions(s, pools, tenant, groups)) yield line('exemption', exemption);
    for (let r = 0; r < s.risks; r++) yield line('risk', buildRisk(s, tenant, r));
  }
}

/** Bytes gathered before a write: large writes are far cheaper than one per line. */
const CHUNK_SIZE = 64 * 1024;

/**
 * Writes every record line (with `\n`) to `out`, waiting for 'drain' when the stream asks for it, so memory stays flat
 * however slow the consumer is. The stream is left open: the caller owns it (it may be stdout).
 */
export async function writeInventory(
  opts: GenerateOptions,
  out: NodeJS.WritableStream,
  onProgress?: (records: number) => void,
): Promise<{ records: number }> {
  let records = 0;
  let chunk = '';
  const flush = async (): Promise<void> => {
    const text = chunk;
    chunk = '';
    if (!out.write(text)) await once(out, 'drain');
  };
  for (const record of generateRecords(opts)) {
    chunk += `${record}\n`;
    records++;
    if (chunk.length >= CHUNK_SIZE) {
      await flush();
      if (onProgress) {
        onProgress(records);
        // A file or fast pipe never asks to drain, and the loop would never let a timer (the progress line) run.
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
  }
  if (chunk.length > 0) await flush();
  return { records };
}
