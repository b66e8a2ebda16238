// The engine differential's dataset: 45 minutes of deterministic samples at
// 15 s (and a few series at irregular, millisecond-odd intervals) ending a
// few minutes before now, made to exercise what PromQL evaluation gets wrong
// first: counter resets, staleness markers ending series mid-range, label
// churn (series that appear and vanish without a marker), classic and native
// histograms (exponential schemas, counter resets), summaries, UTF-8 metric
// and label names, recording-rule names with colons, NaN and ±Inf values,
// and enough series for every aggregation to have groups. Every value comes
// from a seeded generator, so both receivers get the same bytes.
import type { HistogramSpec, SampleSpec, SeriesSpec } from '../../../../support/remote-write-request.ts';

/** The grid every regular series is sampled on. */
export const stepMs = 15_000;
/** How much data there is: 45 minutes. */
export const spanMs = 45 * 60_000;
/** Written as a sample value, then replaced by the stale marker's bits in the encoded request; appears nowhere else. */
export const staleSentinel = 7.125e-301;
/** The `job` label of every synthetic series. */
export const syntheticJob = 'synthetic';

/** A seeded generator (mulberry32): the same numbers on every run. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** The dataset's time span: the first and last grid time (ms), `end` aligned to the grid and a few minutes before `nowMs`. */
export function datasetSpan(nowMs: number): { readonly startMs: number; readonly endMs: number } {
  const endMs = Math.floor(nowMs / 60_000) * 60_000 - 4 * 60_000;
  return { startMs: endMs - spanMs, endMs };
}

/** Rounds to 6 decimals so that sums of the values stay readable (the comparison is relative anyway). */
const r6 = (v: number): number => Math.round(v * 1e6) / 1e6;

interface Grid {
  readonly startMs: number;
  readonly points: number;
}

const at = (g: Grid, i: number): number => g.startMs + i * stepMs;

function samples(g: Grid, value: (i: number) => number | undefined, from = 0, until = g.points): SampleSpec[] {
  const out: SampleSpec[] = [];
  for (let i = from; i < until; i++) {
    const v = value(i);
    if (v !== undefined) out.push({ value: v, timestampMs: at(g, i) });
  }
  return out;
}

/** A counter with increments from `rand` and resets to 0 before the given indices. */
function counter(g: Grid, rand: () => number, scale: number, resetsAt: readonly number[]): number[] {
  const values: number[] = [];
  let v = r6(rand() * scale * 10);
  for (let i = 0; i < g.points; i++) {
    if (resetsAt.includes(i)) v = r6(rand() * scale);
    else if (i > 0) v = r6(v + rand() * scale);
    values.push(v);
  }
  return values;
}

function counters(g: Grid): SeriesSpec[] {
  const rand = seeded(11);
  const out: SeriesSpec[] = [];
  for (const [n, instance] of ['app-1:8080', 'app-2:8080', 'app-3:8080'].entries()) {
    for (const method of ['GET', 'POST']) {
      for (const code of ['200', '404', '500']) {
        const resets = code === '200' ? [40 + n * 37] : code === '500' && n === 1 ? [90, 140] : [];
        const values = counter(g, rand, code === '200' ? 12 : code === '404' ? 2 : 0.5, resets);
        // app-3's POST 500 series stops with a staleness marker two thirds in.
        const ends = n === 2 && method === 'POST' && code === '500' ? 120 : g.points;
        const s = samples(g, (i) => values[i], 0, ends);
        if (ends < g.points) s.push({ value: staleSentinel, timestampMs: at(g, ends) });
        out.push({ labels: { __name__: 'synth_requests_total', job: syntheticJob, instance, method, code }, samples: s });
      }
    }
  }
  return out;
}

function gauges(g: Grid): SeriesSpec[] {
  const rand = seeded(23);
  const out: SeriesSpec[] = [];
  for (const [n, instance] of ['app-1:8080', 'app-2:8080', 'app-3:8080'].entries()) {
    for (const [z, zone] of ['inlet', 'outlet'].entries()) {
      const base = 20 + n * 5 + z * 2.5;
      out.push({
        labels: { __name__: 'synth_temperature_celsius', job: syntheticJob, instance, zone },
        samples: samples(g, (i) => r6(base + 8 * Math.sin(i / 9 + n) - 3 + rand() * 2)),
      });
    }
    // Memory in bytes: large, integral values.
    out.push({
      labels: { __name__: 'synth_memory_bytes', job: syntheticJob, instance },
      samples: samples(g, (i) => Math.round(2e9 + n * 3e8 + i * 1e6 * (n + 1) + rand() * 5e6)),
    });
  }
  // A gauge crossing zero (sgn, abs, clamp).
  out.push({ labels: { __name__: 'synth_balance', job: syntheticJob, instance: 'ledger:1' }, samples: samples(g, (i) => r6(Math.cos(i / 11) * 7.5)) });
  return out;
}

function staleness(g: Grid): SeriesSpec[] {
  const marker = (i: number): SampleSpec => ({ value: staleSentinel, timestampMs: at(g, i) });
  return [
    // Ends with a marker at 100, comes back at 130, ends again at 160.
    {
      labels: { __name__: 'synth_ephemeral_value', job: syntheticJob, instance: 'eph-1' },
      samples: [...samples(g, (i) => i * 0.5, 0, 100), marker(100), ...samples(g, (i) => i * 0.25, 130, 160), marker(160)],
    },
    // Ends without a marker at 90: visible for 5 more minutes through the lookback.
    { labels: { __name__: 'synth_ephemeral_value', job: syntheticJob, instance: 'eph-2' }, samples: samples(g, (i) => 100 - i, 0, 90) },
    // Starts late.
    { labels: { __name__: 'synth_ephemeral_value', job: syntheticJob, instance: 'eph-3' }, samples: samples(g, (i) => i, 60) },
  ];
}

function churn(g: Grid): SeriesSpec[] {
  // Batches appear for 40 points each, starting every 25 points; odd ones end with a marker.
  const out: SeriesSpec[] = [];
  for (let b = 0; b < 7; b++) {
    const from = b * 25;
    const until = Math.min(from + 40, g.points);
    const s = samples(g, (i) => r6(1 + b * 0.1 + (i - from) * 0.03), from, until);
    if (b % 2 === 1 && until < g.points) s.push({ value: staleSentinel, timestampMs: at(g, until) });
    out.push({ labels: { __name__: 'synth_batch_progress_ratio', job: syntheticJob, batch: `b${b}`, stage: b % 3 === 0 ? 'extract' : 'load' }, samples: s });
  }
  return out;
}

/** Prometheus' bucket bounds, formatted as its text exposition formats them. */
export const classicBounds = ['0.05', '0.1', '0.25', '0.5', '1', '2.5', '5', '+Inf'] as const;

function classicHistograms(g: Grid): SeriesSpec[] {
  const rand = seeded(37);
  const out: SeriesSpec[] = [];
  for (const [n, instance] of ['app-1:8080', 'app-2:8080'].entries()) {
    for (const handler of ['/api/orders', '/api/users']) {
      const buckets = classicBounds.map(() => [] as number[]);
      const sums: number[] = [];
      const cumulative = classicBounds.map(() => 0);
      let sum = 0;
      for (let i = 0; i < g.points; i++) {
        // app-2 /api/users restarts at 110: every series of the histogram resets together.
        if (n === 1 && handler === '/api/users' && i === 110) {
          cumulative.fill(0);
          sum = 0;
        }
        const requests = 3 + Math.floor(rand() * 8);
        for (let k = 0; k < requests; k++) {
          const d = -Math.log(1 - rand()) * (handler === '/api/orders' ? 0.3 : 0.08) * (1 + n);
          sum += d;
          for (const [b, bound] of classicBounds.entries()) if (bound === '+Inf' || d <= Number(bound)) cumulative[b] = (cumulative[b] ?? 0) + 1;
        }
        for (const [b] of classicBounds.entries()) buckets[b]?.push(cumulative[b] ?? 0);
        sums.push(r6(sum));
      }
      const base = { job: syntheticJob, instance, handler };
      for (const [b, le] of classicBounds.entries()) {
        out.push({ labels: { __name__: 'synth_http_request_duration_seconds_bucket', ...base, le }, samples: samples(g, (i) => buckets[b]?.[i]) });
      }
      out.push({ labels: { __name__: 'synth_http_request_duration_seconds_sum', ...base }, samples: samples(g, (i) => sums[i]) });
      out.push({
        labels: { __name__: 'synth_http_request_duration_seconds_count', ...base },
        samples: samples(g, (i) => buckets[classicBounds.length - 1]?.[i]),
      });
    }
  }
  return out;
}

/** Dense bucket counts from index `offset` as one span with deltas, as Prometheus encodes integer histograms. */
function spanOf(offset: number, counts: readonly number[]): { spans: { offset: number; length: number }[]; deltas: number[] } {
  return { spans: [{ offset, length: counts.length }], deltas: counts.map((c, i) => c - (i === 0 ? 0 : (counts[i - 1] ?? 0))) };
}

function nativeHistograms(g: Grid): SeriesSpec[] {
  const rand = seeded(53);
  const out: SeriesSpec[] = [];
  const shapes = [
    { instance: 'app-1:8080', schema: 0, offset: -6, width: 9, resetAt: -1, negative: false },
    { instance: 'app-2:8080', schema: 2, offset: -14, width: 18, resetAt: 95, negative: false },
    { instance: 'app-3:8080', schema: 1, offset: -5, width: 10, resetAt: 150, negative: true },
  ];
  for (const shape of shapes) {
    const positive = Array.from({ length: shape.width }, () => 0);
    const negative = Array.from({ length: 4 }, () => 0);
    let zero = 0;
    let sum = 0;
    const histograms: HistogramSpec[] = [];
    for (let i = 0; i < g.points; i++) {
      if (i === shape.resetAt) {
        positive.fill(0);
        negative.fill(0);
        zero = 0;
        sum = 0;
      }
      const base = 2 ** (2 ** -shape.schema);
      for (let k = 0; k < 6; k++) {
        const b = Math.floor(rand() * shape.width);
        positive[b] = (positive[b] ?? 0) + 1;
        // Observations inside bucket b: (base^(idx-1), base^idx]; take its upper bound.
        sum += base ** (shape.offset + b);
      }
      if (rand() < 0.3) zero += 1;
      if (shape.negative && rand() < 0.5) {
        const b = Math.floor(rand() * negative.length);
        negative[b] = (negative[b] ?? 0) + 1;
        sum -= base ** (b + 1);
      }
      const pos = spanOf(shape.offset, positive);
      const neg = spanOf(1, negative);
      const count = zero + positive.reduce((a, c) => a + c, 0) + negative.reduce((a, c) => a + c, 0);
      histograms.push({
        countInt: count,
        sum: r6(sum),
        schema: shape.schema,
        zeroThreshold: 0.001,
        zeroCountInt: zero,
        positiveSpans: pos.spans,
        positiveDeltas: pos.deltas,
        ...(shape.negative ? { negativeSpans: neg.spans, negativeDeltas: neg.deltas } : {}),
        resetHint: 0,
        timestampMs: at(g, i),
      });
    }
    out.push({ labels: { __name__: 'synth_native_latency_seconds', job: syntheticJob, instance: shape.instance }, histograms });
  }
  return out;
}

function summaries(g: Grid): SeriesSpec[] {
  const rand = seeded(71);
  const out: SeriesSpec[] = [];
  for (const instance of ['rpc-1:9000', 'rpc-2:9000']) {
    const base = { job: syntheticJob, instance, service: 'billing' };
    let count = 0;
    let sum = 0;
    const counts: number[] = [];
    const sums: number[] = [];
    const q = { '0.5': [] as number[], '0.9': [] as number[], '0.99': [] as number[] };
    for (let i = 0; i < g.points; i++) {
      const n = 5 + Math.floor(rand() * 10);
      count += n;
      sum += n * (0.02 + rand() * 0.05);
      counts.push(count);
      sums.push(r6(sum));
      q['0.5'].push(r6(0.02 + rand() * 0.01));
      q['0.9'].push(r6(0.05 + rand() * 0.03));
      q['0.99'].push(r6(0.1 + rand() * 0.2));
    }
    for (const [quantile, values] of Object.entries(q))
      out.push({ labels: { __name__: 'synth_rpc_duration_seconds', ...base, quantile }, samples: samples(g, (i) => values[i]) });
    out.push({ labels: { __name__: 'synth_rpc_duration_seconds_sum', ...base }, samples: samples(g, (i) => sums[i]) });
    out.push({ labels: { __name__: 'synth_rpc_duration_seconds_count', ...base }, samples: samples(g, (i) => counts[i]) });
  }
  return out;
}

function names(g: Grid): SeriesSpec[] {
  const rand = seeded(89);
  return [
    // UTF-8 metric and label names (Prometheus 3 accepts them over remote write).
    {
      labels: { __name__: 'my.metric', job: syntheticJob, 'label.with.dots': 'x', instance: 'utf-1' },
      samples: samples(g, (i) => r6(10 + rand() * 5 + i * 0.01)),
    },
    { labels: { __name__: 'my.metric', job: syntheticJob, 'label.with.dots': 'y', instance: 'utf-1' }, samples: samples(g, () => r6(20 + rand() * 5)) },
    {
      labels: { __name__: 'http.server.request.count', job: syntheticJob, 'service.name': 'checkout', 'http.route': '/cart' },
      samples: samples(g, (i) => i * 3 + (i > 70 ? 1 : 0)),
    },
    {
      labels: { __name__: 'http.server.request.count', job: syntheticJob, 'service.name': 'checkout', 'http.route': '/pay' },
      samples: samples(g, (i) => i * 2),
    },
    // Recording-rule style names.
    { labels: { __name__: 'job:synth_requests:rate5m', job: syntheticJob, code: '200' }, samples: samples(g, (i) => r6(0.8 + 0.2 * Math.sin(i / 7))) },
    { labels: { __name__: 'job:synth_requests:rate5m', job: syntheticJob, code: '500' }, samples: samples(g, (i) => r6(0.01 + 0.005 * Math.cos(i / 5))) },
    {
      labels: { __name__: 'instance:synth_cpu:ratio', job: syntheticJob, instance: 'app-1:8080' },
      samples: samples(g, (i) => r6(0.25 + 0.1 * Math.sin(i / 13))),
    },
    {
      labels: { __name__: 'instance:synth_cpu:ratio', job: syntheticJob, instance: 'app-2:8080' },
      samples: samples(g, (i) => r6(0.55 + 0.1 * Math.cos(i / 17))),
    },
  ];
}

function specialValues(g: Grid): SeriesSpec[] {
  return [
    { labels: { __name__: 'synth_special_value', job: syntheticJob, kind: 'nan' }, samples: samples(g, () => NaN) },
    { labels: { __name__: 'synth_special_value', job: syntheticJob, kind: 'pos_inf' }, samples: samples(g, () => Infinity) },
    { labels: { __name__: 'synth_special_value', job: syntheticJob, kind: 'neg_inf' }, samples: samples(g, () => -Infinity) },
    {
      labels: { __name__: 'synth_special_value', job: syntheticJob, kind: 'mixed' },
      samples: samples(g, (i) => (i % 17 === 5 ? NaN : i % 23 === 7 ? Infinity : i % 29 === 11 ? -Infinity : i % 3)),
    },
    { labels: { __name__: 'synth_special_value', job: syntheticJob, kind: 'zero' }, samples: samples(g, () => 0) },
  ];
}

function manySeries(g: Grid): SeriesSpec[] {
  const rand = seeded(97);
  const out: SeriesSpec[] = [];
  for (let p = 0; p < 5; p++) {
    for (let w = 0; w < 12; w++) {
      const labels = { job: syntheticJob, pool: `pool-${p}`, worker: `w${String(w).padStart(2, '0')}`, region: w % 3 === 0 ? 'eu' : w % 3 === 1 ? 'us' : 'ap' };
      // Distinct values at every step (ties make sort orders implementation-defined).
      const level = p * 100 + w * 7.3;
      out.push({
        labels: { __name__: 'synth_worker_load', ...labels },
        samples: samples(g, (i) => r6(level + 20 * Math.sin(i / 10 + w) + rand() * 0.001 + (p * 12 + w) * 1e-4)),
      });
      out.push({ labels: { __name__: 'synth_worker_up', ...labels }, samples: samples(g, (i) => ((i + w + p) % 19 === 0 ? 0 : 1)) });
      out.push({ labels: { __name__: 'synth_worker_jobs_total', ...labels }, samples: samples(g, (i) => Math.floor(i * (1 + (w % 4)) + p * 3)) });
    }
    out.push({ labels: { __name__: 'synth_pool_capacity', job: syntheticJob, pool: `pool-${p}` }, samples: samples(g, () => 1000 + p * 250) });
    out.push({
      labels: { __name__: 'synth_pool_info', job: syntheticJob, pool: `pool-${p}`, owner: p % 2 === 0 ? 'team-a' : 'team-b', tier: `t${p % 3}` },
      samples: samples(g, () => 1),
    });
  }
  return out;
}

/** Irregular timestamps: gaps of 7.3 s to 41.7 s with odd milliseconds, and one gap longer than the 5 m lookback. */
function irregular(g: Grid): SeriesSpec[] {
  const rand = seeded(101);
  const endMs = at(g, g.points - 1);
  const out: SeriesSpec[] = [];
  for (const instance of ['irr-1', 'irr-2']) {
    const s: SampleSpec[] = [];
    let t = g.startMs + 1234;
    let v = 0;
    while (t <= endMs) {
      v = r6(v + rand() * 4 - 1);
      s.push({ value: v, timestampMs: t });
      const gap = instance === 'irr-2' && s.length === 40 ? 7 * 60_000 + 321 : Math.round(7_300 + rand() * 34_400);
      t += gap;
    }
    out.push({ labels: { __name__: 'synth_irregular_gauge', job: syntheticJob, instance }, samples: s });
    // A counter on the same irregular times.
    let c = 0;
    out.push({
      labels: { __name__: 'synth_irregular_events_total', job: syntheticJob, instance },
      samples: s.map((x, i) => ({ value: (c += 1 + (i % 5)), timestampMs: x.timestampMs })),
    });
  }
  return out;
}

/** Every synthetic series, sorted by time inside each series, for the span ending at `endMs`. */
export function syntheticSeries(startMs: number, endMs: number): SeriesSpec[] {
  const g: Grid = { startMs, points: Math.floor((endMs - startMs) / stepMs) + 1 };
  return [
    ...counters(g),
    ...gauges(g),
    ...staleness(g),
    ...churn(g),
    ...classicHistograms(g),
    ...nativeHistograms(g),
    ...summaries(g),
    ...names(g),
    ...specialValues(g),
    ...manySeries(g),
    ...irregular(g),
  ];
}

/**
 * The series cut into consecutive time slices (every series' samples in
 * [from, from + sliceMs)), so that each receiver appends in time order as a
 * scraping Prometheus would; no out-of-order window is needed.
 */
export function timeSlices(series: readonly SeriesSpec[], startMs: number, endMs: number, sliceMs: number): SeriesSpec[][] {
  const slices: SeriesSpec[][] = [];
  for (let from = startMs; from <= endMs + sliceMs; from += sliceMs) {
    const until = from + sliceMs;
    const inSlice = (t: number): boolean => t >= from && t < until;
    const slice = series.flatMap((s) => {
      const samplesIn = (s.samples ?? []).filter((x) => inSlice(x.timestampMs));
      const histogramsIn = (s.histograms ?? []).filter((h) => inSlice(h.timestampMs));
      return samplesIn.length + histogramsIn.length === 0 ? [] : [{ labels: s.labels, samples: samplesIn, histograms: histogramsIn }];
    });
    if (slice.length > 0) slices.push(slice);
  }
  return slices;
}

/** How many samples and histograms the series hold, stale markers included. */
export function pointCount(series: readonly SeriesSpec[]): number {
  return series.reduce((n, s) => n + (s.samples?.length ?? 0) + (s.histograms?.length ?? 0), 0);
}
