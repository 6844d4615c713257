// The change log's answers as the API serves them (pipeline.md §4), and the report the change log's tests scan.
import { readFileSync } from 'node:fs';

type Json = Record<string, unknown>;
export interface Change {
  seq: string;
  at: string;
  type: string;
  assetId: string | null;
  vulnerabilityId: string | null;
  riskId: string | null;
  cause: Json;
  fields: { name: string; before: unknown; after: unknown }[];
  record: Json | null;
}
export interface ChangePage {
  data: Change[];
  meta: { perPage: number; cursor: string };
}

/** A Trivy report of one image (five OS vulnerabilities and more in its other targets). */
export const TEAMDOJO = readFileSync(
  new URL('fixtures/ingest/trivy/trivy-image-teamdojo-multi-target.json', import.meta.url),
  'utf8',
);
