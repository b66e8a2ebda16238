// The data bench:promql writes to both systems: per tenant, 68 series every
// 15 s (a request counter by job, instance and code, a classic latency
// histogram by job, a memory gauge by job and instance), values a pure
// function of (tenant, series, step) so both systems hold exactly the same
// samples. Written to Prometheus as an OpenMetrics file for
// `promtool tsdb create-blocks-from openmetrics` (with a `tenant` label, as
// one Prometheus holds every tenant), and to Tenantry as remote write 1.0
// requests (snappy-compressed prompb.WriteRequest) under X-Scope-OrgID.
import { createWriteStream } from 'node:fs';
import protobuf from 'protobufjs';
import { compressSync } from 'snappy';

export const stepSeconds = 15;
const jobs = ['checkout', 'cart', 'search', 'auth'] as const;
const instances = [0, 1] as const;
const codes = ['200', '500'] as const;
export const bucketBounds = ['0.05', '0.1', '0.25', '0.5', '1', '2.5', '5', '10', '+Inf'] as const;

export interface Series {
  readonly name: string;
  /** Label pairs without __name__ and tenant, in the order written. */
  readonly labels: ReadonlyArray<readonly [string, string]>;
  /** Value at step `i` (cumulative for counters and histogram series). */
  value(tenant: number, i: number): number;
}

/** A small integer hash: the per-step increment of a counter. */
function hash(a: number, b: number, c: number): number {
  let h = Math.imul(a + 0x9e3779b9, 0x85ebca6b) ^ Math.imul(b + 0x7f4a7c15, 0xc2b2ae35) ^ Math.imul(c + 0x165667b1, 0x27d4eb2f);
  h ^= h >>> 15;
  return (h >>> 0) % 7;
}

/** The series of one tenant (the same 68 for every tenant). */
export function tenantSeries(): Series[] {
  const series: Series[] = [];
  for (const [j, job] of jobs.entries()) {
    for (const inst of instances) {
      for (const [c, code] of codes.entries()) {
        const id = j * 10 + inst * 2 + c;
        // Cumulative: a steady rate distinct per series (so topk has no ties) plus a jitter of 0-6; 500s rarer.
        const perStep = (c === 0 ? 20 : 1) + j * 0.13 + inst * 0.029 + c * 0.0071;
        series.push({ name: 'http_requests_total', labels: [['job', job], ['instance', `${job}-${inst}:9100`], ['code', code]], value: (t, i) => (i + 1) * perStep + hash(t, id, i) });
      }
      series.push({ name: 'memory_usage_bytes', labels: [['job', job], ['instance', `${job}-${inst}:9100`]], value: (t, i) => 1e8 * (j + 1) + 1e6 * hash(t, j * 2 + inst, i) + i * 1000 });
    }
    // Histogram: each step adds (k+1)*m to bucket k (cumulative in le and in time); +Inf = count.
    const m = (t: number, i: number): number => i * 3 + (hash(t, 100 + j, 0) % 3);
    for (const [k, le] of bucketBounds.entries()) {
      const weight = le === '+Inf' ? 10 : k + 1;
      series.push({ name: 'request_duration_seconds_bucket', labels: [['job', job], ['le', le]], value: (t, i) => weight * m(t, i) });
    }
    series.push({ name: 'request_duration_seconds_count', labels: [['job', job]], value: (t, i) => 10 * m(t, i) });
    series.push({ name: 'request_duration_seconds_sum', labels: [['job', job]], value: (t, i) => 1.75 * m(t, i) });
  }
  return series;
}

export const tenantName = (t: number): string => `bench-${String(t).padStart(3, '0')}`;

const families: ReadonlyArray<{ readonly family: string; readonly type: string; readonly names: readonly string[] }> = [
  { family: 'http_requests', type: 'counter', names: ['http_requests_total'] },
  { family: 'memory_usage_bytes', type: 'gauge', names: ['memory_usage_bytes'] },
  { family: 'request_duration_seconds', type: 'histogram', names: ['request_duration_seconds_bucket', 'request_duration_seconds_count', 'request_duration_seconds_sum'] },
];

/** Writes every tenant's samples as one OpenMetrics file (families contiguous, `# EOF` last). */
export async function writeOpenMetrics(file: string, tenants: number, points: number, firstSecond: number): Promise<void> {
  const out = createWriteStream(file);
  const write = (text: string): Promise<void> => (out.write(text) ? Promise.resolve() : new Promise((resolve) => { out.once('drain', resolve); }));
  const all = tenantSeries();
  for (const f of families) {
    await write(`# TYPE ${f.family} ${f.type}\n`);
    for (let t = 0; t < tenants; t++) {
      for (const s of all.filter((x) => f.names.includes(x.name))) {
        const labels = `{tenant="${tenantName(t)}",${s.labels.map(([k, v]) => `${k}="${v}"`).join(',')}}`;
        let chunk = '';
        for (let i = 0; i < points; i++) chunk += `${s.name}${labels} ${s.value(t, i)} ${firstSecond + i * stepSeconds}\n`;
        await write(chunk);
      }
    }
  }
  await write('# EOF\n');
  await new Promise<void>((resolve, reject) => { out.end(() => { resolve(); }); out.once('error', reject); });
}

/** One remote write request: every series of tenant `t` for steps [from, to), snappy-compressed. */
export function remoteWriteRequest(t: number, from: number, to: number, firstSecond: number): Buffer {
  const w = protobuf.Writer.create();
  for (const s of tenantSeries()) {
    w.uint32((1 << 3) | 2).fork(); // WriteRequest.timeseries = 1
    // Remote write sends labels sorted by name.
    const labels = [['__name__', s.name] as const, ...s.labels].sort(([a], [b]) => (a < b ? -1 : 1));
    for (const [name, value] of labels) {
      w.uint32((1 << 3) | 2).fork().uint32((1 << 3) | 2).string(name).uint32((2 << 3) | 2).string(value).ldelim(); // TimeSeries.labels = 1
    }
    for (let i = from; i < to; i++) {
      // TimeSeries.samples = 2: Sample { double value = 1; int64 timestamp = 2 (ms) }
      w.uint32((2 << 3) | 2).fork().uint32((1 << 3) | 1).double(s.value(t, i)).uint32((2 << 3) | 0).int64((firstSecond + i * stepSeconds) * 1000).ldelim();
    }
    w.ldelim();
  }
  return compressSync(Buffer.from(w.finish()));
}

/** Series per tenant. */
export const seriesPerTenant = tenantSeries().length;
