// The engine differential's table: every construct of Prometheus 3.16's
// flag-free PromQL over the synthetic dataset (support/synthetic-series.ts):
// every function, every aggregation, every operator with its matching
// modifiers, set operators, subqueries (nested too), @ with start()/end() and
// absolute times, negative offsets, lookback and staleness edges, classic and
// native histograms, UTF-8 names, recording-rule names, NaN and ±Inf, and
// deliberate error cases whose error type must match. Times inside queries
// (@) are the dataset's, so the table is made for one span.
import type { DifferentialRow } from './differential-runner.ts';

const C = 'synth_requests_total';
const G = 'synth_temperature_celsius';
const M = 'synth_memory_bytes';
const BAL = 'synth_balance';
const E = 'synth_ephemeral_value';
const B = 'synth_batch_progress_ratio';
const H = 'synth_http_request_duration_seconds';
const N = 'synth_native_latency_seconds';
const S = 'synth_rpc_duration_seconds';
const X = 'synth_special_value';
const W = 'synth_worker_load';
const UP = 'synth_worker_up';
const JOBS = 'synth_worker_jobs_total';
const CAP = 'synth_pool_capacity';
const INFO = 'synth_pool_info';
const I = 'synth_irregular_gauge';
const IC = 'synth_irregular_events_total';

type Opts = Omit<DifferentialRow, 'query' | 'construct'>;
const row = (construct: string, query: string, opts: Opts = {}): DifferentialRow => ({ construct, query, ...opts });
const rows = (construct: string, queries: readonly string[], opts: Opts = {}): DifferentialRow[] => queries.map((q) => row(construct, q, opts));

function rangeFunctions(): DifferentialRow[] {
  return [
    ...rows('rate', [
      `rate(${C}[5m])`,
      `rate(${C}[1m])`,
      `rate(${C}{code="500"}[2m])`,
      `rate(${C}[30s])`,
      `rate(${C}[15s])`,
      `rate(${C}[1m15s])`,
      `rate(${IC}[1m])`,
      `rate(${IC}[5m])`,
      `rate(${JOBS}[3m])`,
    ]),
    ...rows('irate', [`irate(${C}[1m])`, `irate(${C}[5m])`, `irate(${IC}[2m])`]),
    ...rows('increase', [`increase(${C}[5m])`, `increase(${C}[10m])`, `increase(${C}[1h])`, `increase(${IC}[3m])`]),
    ...rows('delta', [`delta(${G}[5m])`, `delta(${G}[2m])`, `delta(${I}[3m])`]),
    ...rows('idelta', [`idelta(${G}[1m])`, `idelta(${C}[5m])`, `idelta(${I}[3m])`]),
    ...rows('deriv', [`deriv(${G}[5m])`, `deriv(${C}[10m])`, `deriv(${I}[3m])`]),
    ...rows('predict_linear', [`predict_linear(${G}[10m], 600)`, `predict_linear(${C}[5m], 3600)`, `predict_linear(${G}[5m], -300)`]),
    ...rows('resets', [`resets(${C}[10m])`, `resets(${C}[1h])`]),
    ...rows('changes', [`changes(${C}[5m])`, `changes(${G}[10m])`, `changes(${I}[4m])`, `changes(${UP}[30m])`]),
  ];
}

function overTime(): DifferentialRow[] {
  const fns = ['avg', 'min', 'max', 'sum', 'count', 'stddev', 'stdvar', 'last', 'present'];
  return [
    ...fns.map((f) => row(`${f}_over_time`, `${f}_over_time(${G}[5m])`)),
    ...fns.map((f) => row(`${f}_over_time`, `${f}_over_time(${I}[2m])`)),
    ...['avg', 'sum', 'max', 'min', 'stddev'].map((f) => row(`${f}_over_time special values`, `${f}_over_time(${X}[5m])`)),
    ...rows('quantile_over_time', [
      `quantile_over_time(0.5, ${G}[5m])`,
      `quantile_over_time(0.9, ${W}[10m])`,
      `quantile_over_time(0, ${G}[5m])`,
      `quantile_over_time(1, ${G}[5m])`,
      `quantile_over_time(-1, ${G}[5m])`,
      `quantile_over_time(2, ${G}[5m])`,
      `quantile_over_time(0.5, ${X}[5m])`,
    ]),
    ...rows('absent_over_time', [
      `absent_over_time(nonexistent_metric[5m])`,
      `absent_over_time(${G}[5m])`,
      `absent_over_time(nonexistent_metric{job="x", instance=~"y.*", zone="z"}[1m])`,
      `absent_over_time(${E}{instance="eph-1"}[1m])`,
    ]),
  ];
}

function mathFunctions(): DifferentialRow[] {
  const unary = [
    'abs',
    'ceil',
    'floor',
    'round',
    'exp',
    'ln',
    'log2',
    'log10',
    'sqrt',
    'sgn',
    'deg',
    'rad',
    'sin',
    'cos',
    'tan',
    'asin',
    'acos',
    'atan',
    'sinh',
    'cosh',
    'tanh',
    'asinh',
    'acosh',
    'atanh',
  ];
  return [
    ...unary.map((f) => row(f, `${f}(${BAL})`)),
    ...['abs', 'ln', 'sqrt', 'acosh', 'log10'].map((f) => row(f, `${f}(${G})`)),
    ...['abs', 'exp', 'ln', 'sgn', 'floor'].map((f) => row(`${f} special values`, `${f}(${X})`)),
    ...rows('trigonometric in range', [`asin(${BAL} / 7.5)`, `acos(${BAL} / 7.5)`, `atanh(${BAL} / 8)`]),
    ...rows('round to', [`round(${BAL}, 0.25)`, `round(${G}, 5)`, `round(${M}, 1e6)`]),
    ...rows('clamp', [`clamp(${BAL}, -2, 3)`, `clamp(${BAL}, 3, -2)`, `clamp_min(${BAL}, 0)`, `clamp_max(${BAL}, 1.5)`, `clamp(${X}, -1, 1)`]),
    ...rows('pi', ['pi()', 'pi() * 2']),
  ];
}

function timeFunctions(): DifferentialRow[] {
  return [
    ...rows('time', ['time()', 'vector(time())', `time() - timestamp(${G})`]),
    ...rows('timestamp', [`timestamp(${G})`, `timestamp(${C})`, `timestamp(${I})`, `timestamp(${E})`, `timestamp(${N})`]),
    ...['minute', 'hour', 'day_of_week', 'day_of_month', 'day_of_year', 'days_in_month', 'month', 'year'].map((f) => row(f, `${f}()`)),
    ...rows('date functions of a vector', [
      `minute(timestamp(${G}))`,
      `hour(timestamp(${C}))`,
      'day_of_week(vector(1700000000))',
      'days_in_month(vector(1706745600))',
      'year(vector(-1))',
      'month(vector(1e9))',
      'day_of_year(vector(1735603200))',
      'day_of_month(vector(1709164800))',
    ]),
    ...rows('scalar', [`scalar(${G})`, `scalar(${BAL})`, `scalar(sum(${G}))`, `${G} - scalar(avg(${G}))`]),
    ...rows('vector', ['vector(1)', `vector(scalar(${BAL})) * 2`, 'vector(NaN)']),
  ];
}

function labelFunctions(): DifferentialRow[] {
  return [
    ...rows('label_replace', [
      `label_replace(${G}, "zone_copy", "$1", "zone", "(.*)")`,
      `label_replace(${G}, "short", "$1", "instance", "app-([0-9]+):.*")`,
      `label_replace(${G}, "short", "$1", "instance", "nomatch(.*)")`,
      `label_replace(${G}, "__name__", "renamed_metric", "", "")`,
      `label_replace(${G}, "zone", "", "zone", "inlet")`,
      `label_replace(rate(${C}[5m]), "status_class", "\${1}xx", "code", "([0-9]).*")`,
      `label_replace({"my.metric"}, "copy.dots", "$1", "label.with.dots", "(.*)")`,
    ]),
    ...rows('label_join', [
      `label_join(${G}, "id", "/", "instance", "zone")`,
      `label_join(${G}, "id", "")`,
      `label_join(${C}, "key", "-", "method", "code", "instance")`,
      `label_join(${W}, "pool", ",", "region", "pool")`,
      `label_join(${G}, "__name__", "_", "zone", "zone")`,
    ]),
  ];
}

function histograms(): DifferentialRow[] {
  const byLe = `sum by (le) (rate(${H}_bucket[5m]))`;
  return [
    ...rows('histogram_quantile classic', [
      `histogram_quantile(0.9, rate(${H}_bucket[5m]))`,
      `histogram_quantile(0.5, ${byLe})`,
      `histogram_quantile(0.99, sum by (le, handler) (increase(${H}_bucket[10m])))`,
      `histogram_quantile(0, ${byLe})`,
      `histogram_quantile(1, ${byLe})`,
      `histogram_quantile(1.5, ${byLe})`,
      `histogram_quantile(-0.1, ${byLe})`,
      `histogram_quantile(0.9, ${H}_bucket)`,
      `histogram_quantile(0.9, sum by (le) (${H}_bucket{instance="app-1:8080"}))`,
      `histogram_quantile(0.9, rate(${H}_bucket{le!="+Inf"}[5m]))`,
      `histogram_quantile(0.75, sum without (instance) (rate(${H}_bucket[2m])))`,
    ]),
    // Prometheus' annotations beside histogram_quantile: bucket notes at the
    // vector argument (inside its parentheses) without the metric name, the
    // quantile warning at the first, the monotonicity info folded over the
    // query (bounds, largest decrease in Go's %.2g, its odd sample count and
    // times). label_replace turns a bucket into one below where it belongs
    // (le="1" as "0.07", le="2.5" as "0.07"), so the buckets above it count
    // fewer, raw (integer decreases) and rated (fractional ones); a gauge has
    // no `le` at all.
    ...rows('histogram_quantile annotations', [
      `histogram_quantile(0.9, ${G})`,
      `histogram_quantile(1.5, (${G}))`,
      `histogram_fraction(0, 1, ${G})`,
      `quantile((1.5), (${G}))`,
      `histogram_quantile(0.9, label_replace(${H}_bucket, "le", "x$1", "le", "(0.05)"))`,
      `histogram_quantile(0.9, (label_replace(sum by (le) (rate(${H}_bucket[5m])), "le", "0.07", "le", "1")))`,
      `histogram_quantile(0.5, label_replace(${H}_bucket, "le", "0.07", "le", "2.5"))`,
      `histogram_quantile(0.9, label_replace(${H}_bucket, "le", "0.07", "le", "2.5")) / histogram_quantile(0.5, label_replace(${H}_bucket, "le", "0.07", "le", "1"))`,
      `max_over_time(histogram_quantile(0.9, label_replace(${H}_bucket, "le", "0.07", "le", "1"))[10m:1m])`,
      // One warning raised at two places: Prometheus keys annotations by their text alone, the last place kept.
      `histogram_quantile(1.5, ${byLe}) + histogram_quantile(1.5, ${byLe})`,
    ]),
    ...rows('classic histogram arithmetic', [
      byLe,
      `rate(${H}_sum[5m]) / rate(${H}_count[5m])`,
      `${H}_sum / ${H}_count`,
      `sum(rate(${H}_bucket{le="0.25"}[5m])) / sum(rate(${H}_count[5m]))`,
    ]),
    ...rows('native histogram selectors', [N, `${N}{instance="app-2:8080"}`, `last_over_time(${N}[5m])`]),
    ...rows('native histogram rate', [`rate(${N}[5m])`, `increase(${N}[10m])`, `rate(${N}[1m])`, `irate(${N}[1m])`, `delta(${N}[5m])`]),
    ...rows('histogram_quantile native', [
      `histogram_quantile(0.9, rate(${N}[5m]))`,
      `histogram_quantile(0.5, sum(rate(${N}[5m])))`,
      `histogram_quantile(0.99, ${N})`,
      `histogram_quantile(0, rate(${N}[5m]))`,
      `histogram_quantile(1, ${N})`,
      `histogram_quantile(0.1, ${N}{instance="app-3:8080"})`,
    ]),
    ...rows('histogram_count', [`histogram_count(rate(${N}[5m]))`, `histogram_count(${N})`]),
    ...rows('histogram_sum', [`histogram_sum(rate(${N}[5m]))`, `histogram_sum(${N})`]),
    ...rows('histogram_avg', [`histogram_avg(rate(${N}[5m]))`, `histogram_avg(${N})`]),
    ...rows('histogram_stddev', [`histogram_stddev(rate(${N}[5m]))`, `histogram_stddev(${N})`]),
    ...rows('histogram_stdvar', [`histogram_stdvar(rate(${N}[5m]))`, `histogram_stdvar(${N})`]),
    ...rows('histogram_fraction', [
      `histogram_fraction(0, 1, rate(${N}[5m]))`,
      `histogram_fraction(-Inf, 0.5, ${N})`,
      `histogram_fraction(0.1, +Inf, rate(${N}[10m]))`,
      `histogram_fraction(-1, 0, ${N}{instance="app-3:8080"})`,
    ]),
    ...rows('native histogram aggregation', [`sum(${N})`, `sum by (job) (rate(${N}[5m]))`, `avg(${N})`, `count(${N})`, `sum(rate(${N}[5m])) / 2`]),
    ...rows('native histogram arithmetic', [`${N} * 2`, `${N} / 4`, `${N} + ${N}`, `${N} - ${N} offset 5m`]),
    ...rows('native histogram over time', [
      `count_over_time(${N}[5m])`,
      `sum_over_time(${N}[2m])`,
      `avg_over_time(${N}[2m])`,
      `resets(${N}[1h])`,
      `present_over_time(${N}[5m])`,
      `changes(${N}[10m])`,
    ]),
    ...rows('summary', [
      `${S}{quantile="0.99"}`,
      `max by (quantile) (${S})`,
      `rate(${S}_sum[5m]) / rate(${S}_count[5m])`,
      `avg_over_time(${S}{quantile="0.9"}[10m])`,
    ]),
  ];
}

function aggregations(): DifferentialRow[] {
  return [
    ...rows('sum', [
      `sum(${W})`,
      `sum by (pool) (${W})`,
      `sum without (worker) (${W})`,
      `sum(rate(${C}[5m])) by (code)`,
      `sum by (method, code) (increase(${C}[10m]))`,
      `sum(${X})`,
      `sum by (kind) (${X})`,
      `sum by (__name__) ({__name__=~"synth_worker_.*"})`,
    ]),
    ...rows('avg', [`avg by (region) (${W})`, `avg(${M})`, `avg without (instance) (rate(${C}[5m]))`, `avg(${X})`]),
    ...rows('min/max', [`min by (pool) (${W})`, `max by (pool) (${W})`, `max by (instance) (rate(${C}[1m]))`, `max(${X})`, `min(${X})`]),
    ...rows('count', [`count by (region) (${W})`, `count without (worker, region) (${W})`, `count(${X})`, `count(count by (pool) (${W}))`, `count(${B})`]),
    ...rows('group', [`group by (pool) (${W})`, `group(${W})`, `group without (worker) (${UP} == 0)`]),
    ...rows('stddev', [`stddev by (pool) (${W})`, `stddev(${W})`, `stddev(${X})`]),
    ...rows('stdvar', [`stdvar by (pool) (${W})`, `stdvar without (worker, region) (${W})`]),
    ...rows('topk', [`topk(3, ${W})`, `topk(5, rate(${C}[5m]))`, `topk(scalar(count(${CAP}) or vector(3)), ${W})`, `topk(2, ${X})`], { ordered: true }),
    row('topk by', `topk by (pool) (2, ${W})`),
    ...rows('bottomk', [`bottomk(3, ${W})`, `bottomk(2, ${X})`], { ordered: true }),
    row('bottomk by', `bottomk by (region) (1, ${W})`),
    ...rows('quantile', [
      `quantile(0.5, ${W})`,
      `quantile by (pool) (0.9, ${W})`,
      `quantile(0, ${W})`,
      `quantile(1.5, ${W})`,
      `quantile(-0.5, ${W})`,
      `quantile(0.5, ${X})`,
    ]),
    ...rows('count_values', [
      `count_values("up", ${UP})`,
      `count_values by (pool) ("value", ${UP})`,
      `count_values("v", round(${W} / 100))`,
      `count_values("temp", floor(${G}))`,
      `count_values("kind", ${X})`,
    ]),
    ...rows('aggregation of an expression', [`sum(${W}) / count(${W})`, `sum by (pool) (${W}) / on (pool) ${CAP}`, `max(sum by (pool) (${W}))`]),
  ];
}

function operators(): DifferentialRow[] {
  return [
    ...rows('arithmetic vector/scalar', [
      `${W} + 1`,
      `${W} - 1`,
      `${W} * 2`,
      `${W} / 0`,
      `-${W}`,
      `${W} % 7`,
      `${W} ^ 2`,
      `2 ^ ${BAL}`,
      `${BAL} % 2`,
      `${BAL} % -3`,
      `${BAL} atan2 2`,
      `1 / ${BAL}`,
      `${X} % 2`,
      `${X} + 1`,
      `${X} * 0`,
      `-${X}`,
    ]),
    ...rows('arithmetic scalar/scalar', [
      '1 + 2 * 3',
      '2 ^ 3 ^ 2',
      '-2 ^ 2',
      '5 % 3',
      '1 / 0',
      '-1 / 0',
      '0 / 0',
      '(1 + 2) * 4',
      '10 atan2 3',
      '1',
      '-1.5e3',
      '0x1F',
      'Inf',
      '-Inf',
      'NaN',
    ]),
    ...rows('one-to-one matching', [
      `${S}_sum / ${S}_count`,
      `${W} - ${W} offset 5m`,
      `${G} - ${G} offset 1m`,
      `${G} / ignoring (zone) group_left max without (zone) (${G})`,
    ]),
    ...rows('on / ignoring', [
      `sum by (job, pool) (${W}) / ignoring (region) ${CAP}`,
      `${C} / ignoring (code) group_left sum without (code) (${C})`,
      `sum by (instance) (rate(${C}[5m])) / on (instance) sum by (instance) (rate(${C}[10m]))`,
    ]),
    ...rows('group_left', [
      `${W} / on (pool) group_left ${CAP}`,
      `${W} * on (pool) group_left (owner, tier) ${INFO}`,
      `${UP} * on (pool) group_left (owner) ${INFO}`,
    ]),
    ...rows('group_right', [`${INFO} * on (pool) group_right (owner) ${W}`, `${CAP} - on (pool) group_right sum by (pool, region) (${W})`]),
    ...rows('comparison filter', [
      `${W} > 300`,
      `${W} != 0`,
      `${BAL} >= 0`,
      `300 < ${W}`,
      `${G} > ${G} offset 1m`,
      `${W} < on (pool) group_left ${CAP} / 4`,
      `${X} > 0`,
      `${X} == ${X}`,
    ]),
    ...rows('comparison bool', [
      `${W} > bool 300`,
      `${W} == bool ${W}`,
      `${BAL} <= bool 0`,
      '1 == bool 1',
      '1 > bool 2',
      `${X} == bool ${X}`,
      `${X} != bool 1`,
    ]),
    ...rows('and', [`${W} > 400 and ${W} < 450`, `${W} and on (pool) ${INFO}{owner="team-a"}`, `${C} and ${C} offset 30m`]),
    ...rows('or', [
      `${W}{pool="pool-0"} or ${W}{pool="pool-1"}`,
      `${CAP} or vector(0)`,
      `absent(nonexistent_metric) or vector(1)`,
      `(${W} > 450) or (${W} < 50)`,
      `sum by (pool) (${W} > 300) or on (pool) ${CAP} * 0`,
    ]),
    ...rows('unless', [`${W} unless ${W} > 200`, `${W} unless on (pool) ${INFO}{owner="team-b"}`, `${UP} unless ignoring (region) ${UP} == 0`]),
    ...rows('precedence', [`${W} - ${W} offset 5m > 0`, `-${W} ^ 2`, `sum(${W}) by (pool) * 2 > 1000`, `${W} > 100 < 300`, `1 + ${W} * 2 / 4 - 1`]),
  ];
}

function subqueries(startS: number): DifferentialRow[] {
  return [
    ...rows('subquery', [
      `max_over_time(rate(${C}[1m])[10m:1m])`,
      `avg_over_time(${G}[10m:])`,
      `rate(${C}[5m:30s])`,
      `max_over_time(deriv(${G}[5m])[15m:2m])`,
      `min_over_time(${W}[5m:45s] offset 2m)`,
      `count_over_time(${E}[20m:1m])`,
      `last_over_time(${G}[5m:17s])`,
      `quantile_over_time(0.9, rate(${C}[2m])[15m:1m])`,
      `stddev_over_time(${G}[30m:2m])`,
      `avg_over_time((${W} > 400)[10m:1m])`,
      `max_over_time(vector(time())[5m:1m])`,
      `deriv(sum(${G})[10m:30s])`,
      `increase(sum(${C})[10m:1m])`,
      `rate(${N}[5m:1m])`,
      `sum_over_time(sum(rate(${C}[1m]))[10m:1m])`,
      `count_over_time(${B}[10m:1m])`,
    ]),
    ...rows('nested subquery', [
      `max_over_time(avg_over_time(${G}[5m:1m])[20m:5m])`,
      `min_over_time(max_over_time(rate(${C}[1m])[5m:30s])[15m:1m])`,
      `avg_over_time(sum_over_time(${W}[2m:1m])[6m:3m] offset 1m)`,
    ]),
    ...rows('subquery @', [`avg_over_time(${G}[5m:1m] @ end())`, `max_over_time(rate(${C}[1m])[10m:1m] @ ${startS + 900})`]),
    row('subquery as result', `${G}[5m:1m]`, { instantOnly: true }),
  ];
}

function atAndOffset(startS: number, endS: number): DifferentialRow[] {
  return [
    ...rows('@ absolute', [
      `${G} @ ${startS + 600}`,
      `rate(${C}[5m] @ ${startS + 900})`,
      `${G} @ ${startS + 600} offset 1m`,
      `timestamp(${G} @ ${startS + 601.5})`,
      `${C} @ ${endS + 299}`,
      `sum(${W} @ ${startS + 1200}) by (pool)`,
    ]),
    ...rows('@ start()/end()', [
      `${G} @ start()`,
      `${G} @ end()`,
      `rate(${C}[5m] @ end())`,
      `sum(${G} @ start())`,
      `max_over_time(${G}[10m] @ start())`,
      `(${G} @ start()) - ${G}`,
      `${E} @ end()`,
    ]),
    ...rows('negative offset', [
      `${G} offset -5m`,
      `rate(${C}[5m] offset -2m)`,
      `${G} offset -20m`,
      `max_over_time(${G}[5m] offset -10m)`,
      `sum(${G} offset -10m)`,
    ]),
    ...rows('offset', [`${G} offset 1m30s`, `${G} offset 0s`, `sum(${G} offset 10m)`, `count_over_time(${C}[1m] offset 30s)`, `${G} offset 5m`]),
  ];
}

function stalenessAndLookback(): DifferentialRow[] {
  return [
    ...rows('staleness marker', [
      E,
      `${E}{instance="eph-1"}`,
      `last_over_time(${E}[10m])`,
      `count_over_time(${E}[10m])`,
      `${E} == ${E}`,
      `${E} offset 5m`,
      `${C}{instance="app-3:8080", method="POST", code="500"}`,
      `rate(${C}{instance="app-3:8080"}[5m])`,
      `absent(${E}{instance="eph-1"})`,
    ]),
    ...rows('label churn', [B, `sum by (stage) (${B})`, `count_over_time(${B}[5m])`, `present_over_time(${B}[3m])`, `max by (batch) (${B})`]),
    ...rows('lookback edges', [
      `last_over_time(${G}[15s])`,
      `count_over_time(${G}[15s])`,
      `count_over_time(${G}[30s])`,
      `count_over_time(${G}[4m59s])`,
      `count_over_time(${I}[1m])`,
      I,
      `${I} offset 7m`,
      `sum_over_time(${IC}[45s])`,
    ]),
  ];
}

function namesAndSelectors(): DifferentialRow[] {
  return [
    ...rows('UTF-8 names', [
      '{"my.metric"}',
      '{"my.metric", "label.with.dots"="x"}',
      'sum by ("label.with.dots") ({"my.metric"})',
      'rate({"http.server.request.count"}[5m])',
      'sum by ("service.name", "http.route") (increase({"http.server.request.count"}[10m]))',
      '{__name__=~"my[.]metric"}',
      'count by (__name__) ({__name__=~"http[.].*|my[.].*"})',
      '{"my.metric"} > 20',
      'max_over_time({"my.metric"}[5m])',
      '{"my.metric", "label.with.dots"!="x"}',
    ]),
    ...rows('recording-rule names', [
      'job:synth_requests:rate5m',
      'sum(job:synth_requests:rate5m)',
      'job:synth_requests:rate5m{code="500"} / ignoring (code) job:synth_requests:rate5m{code="200"}',
      'instance:synth_cpu:ratio * 100',
      'avg_over_time(instance:synth_cpu:ratio[10m])',
      '{__name__=~"job:.*"}',
    ]),
    row('recording-rule names topk', 'topk(1, instance:synth_cpu:ratio)', { ordered: true }),
    ...rows('matchers', [
      `${W}{pool=~"pool-[12]", region!="eu"}`,
      `${W}{worker!~"w0.*"}`,
      `${C}{code=~"5.."}`,
      `${G}{zone=""}`,
      `${G}{nonexistent=""}`,
      `{__name__=~"synth_(temperature|memory).*", instance="app-1:8080"}`,
      `${C}{code=~"2..|4.."}`,
      `{job="synthetic", __name__="${BAL}"}`,
    ]),
    ...rows('special values', [X, `${X} > -Inf`]),
    ...rows('absent', ['absent(nonexistent_metric)', 'absent(nonexistent_metric{job="x", instance=~"y"})', `absent(${G})`, 'absent(sum(nonexistent_metric))']),
    ...rows('sort', [`sort(${W})`, `sort(sum by (pool) (${W}))`, `sort(${G})`, `sort(${X})`], { ordered: true }),
    ...rows('sort_desc', [`sort_desc(${W})`, `sort_desc(rate(${C}[5m]))`, `sort_desc(${X})`], { ordered: true }),
    row('string literal', '"hello"', { instantOnly: true }),
    ...rows('range vector result', [`${G}[5m]`, `${N}[1m]`, `${I}[2m]`], { instantOnly: true }),
  ];
}

function errorCases(startS: number): DifferentialRow[] {
  // Pinned with @ to a time with data, so that they fail at every evaluation.
  const t = startS + 600;
  return [
    ...rows('many-to-many error', [`${W} @ ${t} * on (pool) ${W} @ ${t}`, `${INFO} @ ${t} * on (owner) group_left ${CAP} @ ${t}`], { error: 'execution' }),
    row('duplicate label set error', `label_replace(${G} @ ${t}, "instance", "", "instance", ".*")`, { error: 'execution' }),
    row('invalid regular expression', `label_replace(${G}, "dst", "$1", "zone", "(")`, { error: 'execution' }),
    ...rows(
      'parse errors',
      [
        `sum(${G}`,
        `rate(${G})`,
        `no_such_function(${G})`,
        `sort_by_label(${G}, "zone")`,
        `limitk(2, ${W})`,
        `rate(${C}[5m])[5m]`,
        `topk("a", ${W})`,
        `quantile_over_time(0.5, ${G})`,
        '1 +',
        `${G} offset`,
        '{}',
        '{job=~".*"}',
        `count_values(1, ${W})`,
      ],
      { error: 'bad_data' },
    ),
  ];
}

/** The table for a dataset spanning [startS, endS] (unix seconds). */
export function engineQueries(startS: number, endS: number): DifferentialRow[] {
  return [
    ...rangeFunctions(),
    ...overTime(),
    ...mathFunctions(),
    ...timeFunctions(),
    ...labelFunctions(),
    ...histograms(),
    ...aggregations(),
    ...operators(),
    ...subqueries(startS),
    ...atAndOffset(startS, endS),
    ...stalenessAndLookback(),
    ...namesAndSelectors(),
    ...errorCases(startS),
  ];
}
