// The ten queries bench:promql times: the five dashboard queries of issue 16
// and five heavier ones of issue 34. `{S}` is where Prometheus, which holds
// every tenant, is given the tenant's selector (`{tenant="bench-007"}`);
// Tenantry answers the same text with `{S}` removed, under X-Scope-OrgID.
// `wide` queries run on the tenants holding the wide gauge.

export interface BenchQuery {
  readonly name: string;
  readonly promql: string;
  readonly wide?: boolean;
}

export const benchQueries: readonly BenchQuery[] = [
  { name: 'rate by service', promql: 'sum by (job) (rate(http_requests_total{S}[5m]))' },
  { name: 'p99 histogram_quantile', promql: 'histogram_quantile(0.99, sum by (le, job) (rate(request_duration_seconds_bucket{S}[5m])))' },
  { name: 'topk', promql: 'topk(3, sum by (instance) (rate(http_requests_total{S}[5m])))' },
  { name: 'sum by', promql: 'sum by (code) (http_requests_total{S})' },
  { name: 'avg_over_time', promql: 'avg_over_time(memory_usage_bytes{S}[5m])' },
  {
    name: 'group_left info join',
    promql: 'sum by (namespace, pod) (rate(container_cpu_usage_seconds_total{S}[5m])) * on (namespace, pod) group_left (node) kube_pod_info{S}',
  },
  { name: '1h subquery', promql: 'max_over_time(rate(http_requests_total{S}[5m])[1h:1m])' },
  { name: 'quantile_over_time', promql: 'quantile_over_time(0.9, memory_usage_bytes{S}[10m])' },
  {
    name: 'label_replace + sum by',
    promql: 'sum by (deployment) (label_replace(rate(container_cpu_usage_seconds_total{S}[5m]), "deployment", "$1", "pod", "(.*)-[a-z0-9]+-[a-z0-9]+"))',
  },
  { name: 'count by, 10k series', promql: 'count by (namespace) (container_memory_working_set_bytes{S})', wide: true },
];

/** The query as Prometheus is asked it, for tenant `tenant`. */
export const forPrometheus = (q: BenchQuery, tenant: string): string => q.promql.replaceAll('{S}', `{tenant="${tenant}"}`);

/** The query as Tenantry is asked it (the tenant is the header's). */
export const forTenantry = (q: BenchQuery): string => q.promql.replaceAll('{S}', '');
