// Asset identity: what other records need to point at an asset, recomputable from (seed, tenant, index) alone,
// and the provider-specific resource names it is built from.
import { APPS, ASSET_KINDS, COMPONENTS, REGIONS, type AssetKind } from './catalog.js';
import { chance, createRng, pick, uuid, weightedPicker } from './random.js';
import { ASSET_ID_PREFIX, SHARED_ASSET_IDS, type Settings } from './settings.js';
import { resourceNames, typeOf } from './names.js';
import { type Integration, type Tenant } from './tenants.js';

export interface AssetCore {
  index: number;
  kind: AssetKind;
  type: string;
  service: string;
  id: string;
  region: string;
  resourceId: string;
  resourceName: string;
  name: string;
  app: string;
  component: string;
  envTag: string;
  /** The integration whose account holds the asset (used for account numbers and names). */
  integration: Integration;
  /** Usually the integration's id; about 1% of assets name an integration that does not exist. */
  integrationId: string;
  fullResourceName: string;
  resourceURL: string | null;
  /** Container image for workloads that run one. */
  image: string | null;
  /** Extra naming facts some types need later (task definition revision, Kubernetes namespace, zone). */
  detail: Readonly<Record<string, string | number>>;
}

const AWS_KINDS = ASSET_KINDS.filter((k) => k.provider === 'AWS');
const pickSharedKind = weightedPicker(AWS_KINDS.map((k) => [k, k.weight] as const));

/**
 * The identity of asset `index` of a tenant. The first SHARED_ASSET_IDS assets take their identity from a stream that
 * ignores the tenant, so every tenant has assets with the same ids (AWS ones: every tenant has an AWS integration).
 * `ghost` builds an asset that is never emitted, for risks whose primary asset is not in the inventory.
 */
export function assetCore(s: Settings, tenant: Tenant, index: number, ghost?: number): AssetCore {
  const shared = ghost === undefined && index < SHARED_ASSET_IDS;
  const identity =
    ghost !== undefined
      ? createRng(s.seed, 'ghost-asset', tenant.index, ghost)
      : shared
        ? createRng(s.seed, 'shared-asset', index)
        : createRng(s.seed, 'asset', tenant.index, index);
  const local = shared ? createRng(s.seed, 'asset', tenant.index, index) : identity;
  const kind = shared ? pickSharedKind(identity) : tenant.pickKind(identity);
  const integration = pick(local, tenant.byProvider[kind.provider]);
  const region = kind.global
    ? 'global'
    : shared
      ? pick(identity, REGIONS.AWS)
      : (integration.cluster?.region ?? pick(identity, integration.regions));
  const assetUuid = uuid(identity);
  // Shared identities must not depend on the tenant, so their naming context comes from the identity stream.
  const slug = shared ? pick(identity, ['corp', 'platform', 'shared', 'infra'] as const) : tenant.slug;
  const envTag = shared
    ? pick(identity, ['prod', 'staging', 'dev'] as const)
    : (integration.environment?.tag ?? 'shared');
  const app = pick(identity, APPS);
  const component = pick(identity, COMPONENTS);
  const names = resourceNames(kind, identity, { slug, envTag, app, component, region, integration });
  const integrationId = chance(local, 0.01) ? uuid(local) : integration.integrationId;
  const type = typeOf(kind);
  const service = `${kind.provider}::${kind.service}`;
  const id =
    [ASSET_ID_PREFIX, 'assets', assetUuid, kind.provider, kind.service, kind.resource, region]
      .map((segment) => segment.toLowerCase())
      .join(':') + `:${names.resourceId}`;
  return {
    index,
    kind,
    type,
    service,
    id,
    region,
    app,
    component,
    envTag,
    integration,
    integrationId,
    resourceId: names.resourceId,
    resourceName: names.resourceName,
    name: names.name,
    fullResourceName: names.fullResourceName,
    resourceURL: names.resourceURL,
    image: names.image,
    detail: names.detail,
  };
}
