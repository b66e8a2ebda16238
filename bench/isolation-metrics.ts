// bench:isolation's heavy neighbour: where tenant B's ingest time goes, from
// the process's own /metrics read before and after a phase. The gateway's
// histograms split an export request's time into its wait for admission
// (the pacer, while ClickHouse takes rows slower than they come), its
// write-ahead-log append, and the rest (decoding, the event loop); the
// INSERTs' durations, the process's CPU and the event loop's longest stall
// show what A's queries take from them.

/** One histogram summed over its label sets: cumulative counts per upper bound, sum and count. */
interface Histogram {
  readonly buckets: Map<number, number>;
  sum: number;
  count: number;
}

/** The metrics a phase is compared on, as read at one moment. */
export interface MetricsSnapshot {
  readonly histograms: Map<string, Histogram>;
  readonly cpuSeconds: number;
  /** The event loop's longest delay since the previous read of /metrics (prom-client resets it on every read). */
  readonly loopLagMaxSeconds: number;
  readonly at: number;
}

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
  let loopLagMaxSeconds = 0;
  for (const line of text.split('\n')) {
    const match = /^([a-z_]+?)(_bucket|_sum|_count)?(\{[^}]*\})? ([0-9.e+-]+|\+Inf|NaN)$/.exec(line);
    if (match === null) continue;
    const [, name = '', part, labels = '', raw = '0'] = match;
    const value = Number(raw);
    if (name === 'tenantry_process_cpu_seconds_total' && part === undefined) cpuSeconds = value;
    if (name === 'tenantry_nodejs_eventloop_lag_max_seconds' && part === undefined) loopLagMaxSeconds = value;
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
  return { histograms, cpuSeconds, loopLagMaxSeconds, at: performance.now() };
}

/** One histogram over a phase: how many, their mean, and the bucket bound under which 99% fell (ms). */
export interface PhaseHistogram {
  readonly count: number;
  readonly meanMs: number;
  readonly p99UnderMs: number | string;
}

/** What changed between two snapshots: each watched histogram, the process's CPU use (cores) and the event loop's longest stall meanwhile. */
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
  out['eventLoopMaxStallMs'] = Math.round(after.loopLagMaxSeconds * 1000);
  out['processCpuCores'] = Math.round(((after.cpuSeconds - before.cpuSeconds) / ((after.at - before.at) / 1000)) * 100) / 100;
  return out;
}

/** What the process logged during a phase: stopped statements (how long the store took to end them) and its warnings. */
export interface LogSummary {
  stopped: Record<string, { count: number; meanMs: number; maxMs: number }>;
  warnings: Record<string, number>;
}

/** Counts the process's JSON log lines on `stream` from now until the returned function is called, which gives the summary. */
export function watchLog(stream: NodeJS.ReadableStream): () => LogSummary {
  const ended: Record<string, number[]> = {};
  const warnings: Record<string, number> = {};
  let partial = '';
  const onData = (chunk: string | Buffer): void => {
    const lines = (partial + chunk.toString()).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.startsWith('{')) continue;
      const record = JSON.parse(line) as { level?: string; msg?: string; reason?: string; endedAfterMs?: number };
      if (record.msg === 'a stopped statement ended') (ended[record.reason ?? '?'] ??= []).push(record.endedAfterMs ?? 0);
      else if (record.level === 'warn' || record.level === 'error') warnings[record.msg ?? '?'] = (warnings[record.msg ?? '?'] ?? 0) + 1;
    }
  };
  stream.on('data', onData);
  return () => {
    stream.off('data', onData);
    const stopped = Object.fromEntries(
      Object.entries(ended).map(([reason, ms]) => [
        reason,
        {
          count: ms.length,
          meanMs: Math.round(ms.reduce((a, b) => a + b, 0) / ms.length),
          maxMs: Math.max(...ms),
        },
      ]),
    );
    return { stopped, warnings };
  };
}
