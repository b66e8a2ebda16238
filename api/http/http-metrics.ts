// Prometheus metrics of the API: requests by route, method and status, and a
// latency histogram by route. Registered once per registry.
import { Counter, Histogram } from 'prom-client';
import type { Registry } from 'prom-client';

export interface HttpMetrics {
  observe(route: string, method: string, status: number, seconds: number): void;
}

export function httpMetrics(registry: Registry): HttpMetrics {
  const existing = registry.getSingleMetric('tenantry_api_requests_total');
  const requests =
    existing instanceof Counter
      ? existing
      : new Counter({
          name: 'tenantry_api_requests_total',
          help: 'API requests by route, method and status code.',
          labelNames: ['route', 'method', 'status'],
          registers: [registry],
        });
  const existingLatency = registry.getSingleMetric('tenantry_api_request_duration_seconds');
  const latency =
    existingLatency instanceof Histogram
      ? existingLatency
      : new Histogram({
          name: 'tenantry_api_request_duration_seconds',
          help: 'API request latency by route and method.',
          labelNames: ['route', 'method'],
          buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
          registers: [registry],
        });
  return {
    observe: (route, method, status, seconds) => {
      requests.inc({ route, method, status: String(status) });
      latency.observe({ route, method }, seconds);
    },
  };
}
