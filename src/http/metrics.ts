// Prometheus metrics: request counts and latency per route and status, and the database pool's state.
import type { FastifyInstance } from 'fastify';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Storage } from '../storage/index.js';

export function createMetrics(storage: Storage) {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'secinv_' });
  const labelNames = ['method', 'route', 'status'] as const;
  const requests = new Counter({
    name: 'secinv_http_requests_total',
    help: 'HTTP requests answered',
    labelNames,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'secinv_http_request_duration_seconds',
    help: 'Time to answer HTTP requests',
    labelNames,
    registers: [registry],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  });
  new Gauge({
    name: 'secinv_db_pool_connections',
    help: 'Database pool connections by state (PostgreSQL)',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      const stats = storage.poolStats();
      if (!stats) return;
      this.set({ state: 'total' }, stats.total);
      this.set({ state: 'idle' }, stats.idle);
      this.set({ state: 'waiting' }, stats.waiting);
    },
  });

  return {
    registry,
    /** The text a scrape gets: this registry's, or every serving process's summed (src/cluster.ts). */
    text: (): Promise<string> => registry.metrics(),
    contentType: registry.contentType,
    /** Records every response of the app, labelled by route template (never the raw URL, to bound cardinality). */
    instrument(app: FastifyInstance): void {
      app.addHook('onResponse', async (request, reply) => {
        const labels = {
          method: request.method,
          route: request.routeOptions.url ?? 'unmatched',
          status: String(reply.statusCode),
        };
        requests.inc(labels);
        duration.observe(labels, reply.elapsedTime / 1000);
      });
    },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
