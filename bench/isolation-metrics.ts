// bench:isolation's heavy neighbour: where tenant B's ingest time goes, from
// the process's own /metrics read before and after a phase. The gateway's
// histograms split an export request's time into its wait for admission
// (the pacer, while ClickHouse takes rows slower than they come), its
// write-ahead-log append, and the rest (decoding, the event loop); the
// INSERTs' durations and the process's CPU show what A's queries take from
// them.

/** One histogram summed over its label sets: cumulative counts per upper bound, sum and count. */
interface Histogram { readonly buckets: Map<number, number>; sum: number; count: number }

/** The metrics a phase is compared on, as read at one moment. */
export interface MetricsSnapshot { readonly histograms: Map<string, Histogram>; readonly cpuSeconds: number; readonly at: number }

const watched = [
  'tenantry_gateway_request_duration_seconds',
  'tenantry_gateway_admission_wait_seconds',
  'tenantry_gateway_wal_append_duration_seconds',
  'tenantry_gateway_insert_duration_seconds',
];

/** Reads `url` (a /metrics endpoint) into the watched histograms and the process's CPU seconds. */
export async function readMetrics(url: string): Promise<MetricsSnapshot> {
  const text = await (await fetch(url)).text();
  const histograms = new Map<string, Histogram>(watched.map((name) => [name, { buckets: new Map(), sum: 0, count: 0 }]));
  let cpuSeconds = 0;
  for (const line of text.split('\n')) {
    const match = /^([a-z_]+?)(_bucket|_sum|_count)?(\{[^}]*\})? ([0-9.e+-]+|\+Inf|NaN)$/.exec(line);
    if (match === null) continue;
    const [, name = '', part, labels = '', raw = '0'] = match;
    const value = Number(raw);
    if (name === 'tenantry_process_cpu_seconds_total' && part === undefined) cpuSeconds = value;
    const histogram = histograms.get(name);
    if (histogram === undefined) continue;
    if (part === '_sum') histogram.sum += value;
    else if (part === '_count') histogram.count += value;
    else if (part === '_bucket') {
      const le = /le="([^"]+)"/.exec(labels)?.[1] ?? '+Inf';
      const bound = le === '+Inf' ? Number.POSITIVE_INFINITY : Number(le);
      histogram.buckets.set(bound, (histogram.buckets.get(bound) ?? 0) + value);
    }
  }
  return { histograms, cpuSeconds, at: performance.now() };
}

/** One histogram over a phase: how many, their mean, and the bucket bound under which 99% fell (ms). */
export interface PhaseHistogram { readonly count: number; readonly meanMs: number; readonly p99UnderMs: number | string }

/** What changed between two snapshots: each watched histogram, and the process's CPU use (cores) meanwhile. */
export function phaseMetrics(before: MetricsSnapshot, after: MetricsSnapshot): Record<string, PhaseHistogram | number> {
  const out: Record<string, PhaseHistogram | number> = {};
  for (const name of watched) {
    const a = after.histograms.get(name);
    const b = before.histograms.get(name);
    if (a === undefined || b === undefined) continue;
    const count = a.count - b.count;
    const bounds = [...a.buckets.keys()].sort((x, y) => x - y);
    const under = bounds.find((bound) => (a.buckets.get(bound) ?? 0) - (b.buckets.get(bound) ?? 0) >= 0.99 * count);
    const p99UnderMs = under === undefined || under === Number.POSITIVE_INFINITY ? 'over the largest bucket' : Math.round(under * 1000);
    out[name.replace('tenantry_gateway_', '')] = { count, meanMs: count === 0 ? 0 : Math.round(((a.sum - b.sum) / count) * 1000), p99UnderMs };
  }
  out['processCpuCores'] = Math.round(((after.cpuSeconds - before.cpuSeconds) / ((after.at - before.at) / 1000)) * 100) / 100;
  return out;
}
