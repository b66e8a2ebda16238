// The differential table: PromQL queries over the demo targets' data (see
// demo-target.ts), each run as an instant query at several times and as a
// range query at several steps against the real Prometheus and Tenantry.
// Every construct issue 16 listed is here, and the ones the engine added; grow the table whenever a bug is
// found. A query whose construct Tenantry answers differently on purpose goes
// in `deliberateDifferences` with the reason (never a silent skip).

export interface DifferentialQuery {
  readonly query: string;
  /** What it covers, for the printed table. */
  readonly construct: string;
  /** A range-vector expression: valid as an instant query only. */
  readonly instantOnly?: boolean;
}

const q = (construct: string, query: string, instantOnly = false): DifferentialQuery => ({ construct, query, ...(instantOnly ? { instantOnly } : {}) });

export const differentialQueries: readonly DifferentialQuery[] = [
  // Selectors: the four matchers, __name__, offset, staleness, churn, Prometheus' own series.
  q('selector', 'demo_memory_usage_bytes'),
  q('selector =', 'demo_memory_usage_bytes{type="free"}'),
  q('selector !=', 'demo_memory_usage_bytes{type!="free"}'),
  q('selector =~', 'demo_memory_usage_bytes{type=~"free|used"}'),
  q('selector !~', 'demo_memory_usage_bytes{type!~"c.*", job="demo"}'),
  q('selector __name__', '{__name__="demo_num_cpus"}'),
  q('selector __name__ =~', '{__name__=~"demo_(num_cpus|disk_usage_bytes)"}'),
  q('selector no match', 'nonexistent_metric_name'),
  q('offset', 'demo_memory_usage_bytes offset 10s'),
  q('offset', 'demo_disk_usage_bytes offset 3s'),
  q('staleness (metric disappears)', 'demo_intermittent_metric'),
  q('label churn', 'demo_build_info'),
  q('up (target stops)', 'up'),
  q('scrape_* series', 'scrape_samples_scraped'),
  q('range selector', 'demo_num_cpus[10s]', true),
  // Rates and over-time functions.
  q('rate', 'rate(demo_cpu_usage_seconds_total[5s])'),
  q('rate (counter reset)', 'rate(demo_cpu_usage_seconds_total[30s])'),
  q('rate offset', 'rate(demo_cpu_usage_seconds_total[10s] offset 5s)'),
  q('irate', 'irate(demo_cpu_usage_seconds_total[10s])'),
  q('increase', 'increase(demo_cpu_usage_seconds_total[15s])'),
  q('increase (histogram count)', 'increase(demo_api_request_duration_seconds_count[20s])'),
  q('delta', 'delta(demo_memory_usage_bytes[10s])'),
  q('delta', 'delta(demo_disk_usage_bytes[30s])'),
  q('avg_over_time', 'avg_over_time(demo_memory_usage_bytes[10s])'),
  q('sum_over_time', 'sum_over_time(demo_memory_usage_bytes{type="used"}[7s])'),
  q('min_over_time', 'min_over_time(demo_memory_usage_bytes[15s])'),
  q('max_over_time', 'max_over_time(up[10s])'),
  q('count_over_time', 'count_over_time(demo_intermittent_metric[10s])'),
  q('last_over_time', 'last_over_time(demo_batch_last_success_timestamp_seconds[20s])'),
  // Aggregations.
  q('sum', 'sum(demo_memory_usage_bytes)'),
  q('sum by', 'sum by (type) (demo_memory_usage_bytes)'),
  q('avg without', 'avg without (instance) (demo_memory_usage_bytes)'),
  q('min by', 'min by (instance) (demo_memory_usage_bytes)'),
  q('max without', 'max without (type) (demo_memory_usage_bytes)'),
  q('count by', 'count by (job) (up)'),
  q('sum by rate', 'sum by (mode) (rate(demo_cpu_usage_seconds_total[20s]))'),
  q('topk', 'topk(2, demo_memory_usage_bytes)'),
  q('topk rate', 'topk(3, rate(demo_cpu_usage_seconds_total[10s]))'),
  q('bottomk by', 'bottomk by (instance) (1, demo_memory_usage_bytes)'),
  // Histograms.
  q('histogram_quantile', 'histogram_quantile(0.9, rate(demo_api_request_duration_seconds_bucket[10s]))'),
  q('histogram_quantile sum by le', 'histogram_quantile(0.5, sum by (le) (rate(demo_api_request_duration_seconds_bucket[30s])))'),
  q('histogram_quantile p99 by path', 'histogram_quantile(0.99, sum by (le, path) (increase(demo_api_request_duration_seconds_bucket[20s])))'),
  q('histogram mean', 'rate(demo_api_request_duration_seconds_sum[15s]) / rate(demo_api_request_duration_seconds_count[15s])'),
  // Arithmetic and comparison.
  q('vector / scalar', 'demo_memory_usage_bytes / 1024'),
  q('scalar * vector - scalar', '2 * demo_num_cpus - 1'),
  q('scalar arithmetic', '1 + 2 * 3'),
  q('comparison filter', 'demo_memory_usage_bytes > 250000000'),
  q('comparison bool', 'demo_memory_usage_bytes > bool 250000000'),
  q('vector / on() vector', 'sum by (instance, job) (demo_memory_usage_bytes) / on (instance, job) demo_num_cpus'),
  q('vector / ignoring() vector', 'demo_memory_usage_bytes{type="free"} / ignoring (type) demo_memory_usage_bytes{type="used"}'),
  q('vector < bool ignoring() vector', 'demo_memory_usage_bytes{type="free"} < bool ignoring (type) demo_memory_usage_bytes{type="used"}'),
  q('vector + vector (same labels)', 'demo_cpu_usage_seconds_total + demo_cpu_usage_seconds_total'),
  // Found by the compliance tester (grow the table with each bug found).
  q('unary minus vs ^ precedence', '-1 ^ 2'),
  q('vector % negative scalar', 'demo_memory_usage_bytes % (1 * 2 + 4 / 6 - 10)'),
  q('negative scalar % vector', '(1 * 2 + 4 / 6 - (10 % 7) ^ 2) % demo_memory_usage_bytes'),
  // Functions.
  q('abs', 'abs(demo_num_cpus - 6)'),
  q('clamp_min', 'clamp_min(demo_memory_usage_bytes, 250000000)'),
  q('clamp_max', 'clamp_max(demo_memory_usage_bytes, 250000000)'),
  q('round', 'round(rate(demo_cpu_usage_seconds_total[10s]))'),
  q('round to nearest', 'round(demo_memory_usage_bytes / 1000000, 0.5)'),
  // Refused by the SQL evaluator, answered by the engine.
  q('label_replace', 'label_replace(up, "a", "$1", "instance", "(.*)")'),
  q('predict_linear', 'predict_linear(demo_disk_usage_bytes[1m], 60)'),
  q('subquery', 'max_over_time(rate(demo_cpu_usage_seconds_total[5s])[30s:5s])'),
  q('quantile_over_time', 'quantile_over_time(0.5, demo_memory_usage_bytes[1m])'),
  q('group_left info join', 'demo_memory_usage_bytes * on (instance) group_left (version) demo_build_info'),
  q('or fallback', 'demo_intermittent_metric or vector(0)'),
  q('and / unless', '(demo_memory_usage_bytes and demo_memory_usage_bytes{type="free"}) or (up unless up == 0)'),
  q('sort_desc', 'sort_desc(sum by (type) (demo_memory_usage_bytes))'),
  q('scalar', 'demo_memory_usage_bytes / scalar(sum(demo_num_cpus))'),
  q('changes and resets', 'changes(demo_intermittent_metric[30s]) + resets(demo_cpu_usage_seconds_total[30s])'),
  q('absent', 'absent(nonexistent_metric_name{job="x"})'),
  q('count_values', 'count_values("cpus", demo_num_cpus)'),
  q('stdvar and time()', 'stdvar(demo_memory_usage_bytes) + time() * 0'),
];

/** Queries Tenantry answers differently on purpose, with the reason (printed in the table, not compared). */
export const deliberateDifferences: ReadonlyMap<string, string> = new Map<string, string>([]);

/** Constructs Prometheus 3.16 offers only behind a feature flag: Tenantry refuses each with 400 bad_data naming it, as Prometheus does without the flag. */
export const unsupportedQueries: ReadonlyArray<{ readonly query: string; readonly names: string }> = [
  { query: 'sort_by_label(up, "instance")', names: 'sort_by_label' },
  { query: 'limitk(1, demo_memory_usage_bytes)', names: 'limitk' },
  { query: 'mad_over_time(demo_memory_usage_bytes[1m])', names: 'mad_over_time' },
];
