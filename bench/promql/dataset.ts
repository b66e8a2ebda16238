// The data bench:promql writes to both systems, values a pure function of
// (tenant, series, step) so both hold exactly the same samples. Every tenant
// has the same 104 "narrow" series every 15 s: a request counter by job,
// instance and code, a classic latency histogram by job, a memory gauge by
// job and instance (the five dashboard queries), and a small cluster in
// cAdvisor and kube-state-metrics shapes: container_cpu_usage_seconds_total
// by namespace, pod and container, and kube_pod_info (value 1) naming each
// pod's node (the info join and label_replace queries). A few "wide"
// tenants also have one gauge of many series (10,000 by default) every
// 60 s over the last 65 minutes, container_memory_working_set_bytes by
// namespace and pod (the count by query). Written to Prometheus as an
// OpenMetrics file for `promtool tsdb create-blocks-from openmetrics` (with
// a `tenant` label, as one Prometheus holds every tenant), and to Tenantry
// as remote write 1.0 requests (snappy-compressed prompb.WriteRequest)
// under X-Scope-OrgID.
import { createWriteStream } from 'node:fs';
import protobuf from 'protobufjs';
import { compressSync } from 'snappy';

export const stepSeconds = 15;
export const wideStepSeconds = 60;
/** Points of a wide series: 65 minutes, the last hour and its lookback. */
export const widePoints = 66;
const jobs = ['checkout', 'cart', 'search', 'auth'] as const;
const instances = [0, 1] as const;
const codes = ['200', '500'] as const;
export const bucketBounds = ['0.05', '0.1', '0.25', '0.5', '1', '2.5', '5', '10', '+Inf'] as const;
const namespaces = ['shop', 'platform'] as const;
const deployments = ['api', 'worker', 'web'] as const;
const podSuffixes = ['x2k4q', 'm8n3p'] as const;
const containers = ['app', 'proxy'] as const;

export interface Series {
  readonly name: string;
  /** Label pairs without __name__ and tenant, in the order written. */
  readonly labels: ReadonlyArray<readonly [string, string]>;
  /** Value at step `i` (cumulative for counters and histogram series). */
  value(tenant: number, i: number): number;
}

/** Where the samples are: `points` narrow steps from `firstSecond`, wide series in `wideTenants`. */
export interface Layout {
  readonly tenants: number;
  readonly points: number;
  readonly firstSecond: number;
  readonly wideTenants: readonly number[];
  readonly wideSeries: number;
  readonly wideFirstSecond: number;
}

/** A small integer hash: the per-step increment of a counter. */
function hash(a: number, b: number, c: number): number {
  let h = Math.imul(a + 0x9e3779b9, 0x85ebca6b) ^ Math.imul(b + 0x7f4a7c15, 0xc2b2ae35) ^ Math.imul(c + 0x165667b1, 0x27d4eb2f);
  h ^= h >>> 15;
  return (h >>> 0) % 7;
}

/** Pod names as a ReplicaSet makes them: deployment, pod-template hash, suffix. */
const podName = (d: number, p: number): string => `${deployments[d] ?? ''}-5d8f7c9b${d}-${podSuffixes[p] ?? ''}`;

function clusterSeries(): Series[] {
  const series: Series[] = [];
  for (const [n, namespace] of namespaces.entries()) {
    for (const d of deployments.keys()) {
      for (const p of podSuffixes.keys()) {
        const pod = podName(d, p);
        const podId = n * 100 + d * 10 + p;
        for (const [c, container] of containers.entries()) {
          // CPU seconds: a rate distinct per container (no ties) plus a jitter of 0-6 ms per step.
          const perStep = 0.4 + n * 0.21 + d * 0.053 + p * 0.0117 + c * 0.31;
          series.push({
            name: 'container_cpu_usage_seconds_total',
            labels: [
              ['namespace', namespace],
              ['pod', pod],
              ['container', container],
            ],
            value: (t, i) => (i + 1) * perStep + hash(t, 200 + podId * 2 + c, i) / 1000,
          });
        }
        series.push({
          name: 'kube_pod_info',
          labels: [
            ['namespace', namespace],
            ['pod', pod],
            ['node', `node-${(n + d * 2 + p) % 3}`],
            ['created_by_kind', 'ReplicaSet'],
            ['created_by_name', pod.slice(0, pod.lastIndexOf('-'))],
          ],
          value: () => 1,
        });
      }
    }
  }
  return series;
}

/** The narrow series of one tenant (the same 104 for every tenant). */
export function tenantSeries(): Series[] {
  const series: Series[] = [];
  for (const [j, job] of jobs.entries()) {
    for (const inst of instances) {
      for (const [c, code] of codes.entries()) {
        const id = j * 10 + inst * 2 + c;
        // Cumulative: a steady rate distinct per series (so topk has no ties) plus a jitter of 0-6; 500s rarer.
        const perStep = (c === 0 ? 20 : 1) + j * 0.13 + inst * 0.029 + c * 0.0071;
        series.push({
          name: 'http_requests_total',
          labels: [
            ['job', job],
            ['instance', `${job}-${inst}:9100`],
            ['code', code],
          ],
          value: (t, i) => (i + 1) * perStep + hash(t, id, i),
        });
      }
      series.push({
        name: 'memory_usage_bytes',
        labels: [
          ['job', job],
          ['instance', `${job}-${inst}:9100`],
        ],
        value: (t, i) => 1e8 * (j + 1) + 1e6 * hash(t, j * 2 + inst, i) + i * 1000,
      });
    }
    // Histogram: each step adds (k+1)*m to bucket k (cumulative in le and in time); +Inf = count.
    const m = (t: number, i: number): number => i * 3 + (hash(t, 100 + j, 0) % 3);
    for (const [k, le] of bucketBounds.entries()) {
      const weight = le === '+Inf' ? 10 : k + 1;
      series.push({
        name: 'request_duration_seconds_bucket',
        labels: [
          ['job', job],
          ['le', le],
        ],
        value: (t, i) => weight * m(t, i),
      });
    }
    series.push({ name: 'request_duration_seconds_count', labels: [['job', job]], value: (t, i) => 10 * m(t, i) });
    series.push({ name: 'request_duration_seconds_sum', labels: [['job', job]], value: (t, i) => 1.75 * m(t, i) });
  }
  return [...series, ...clusterSeries()];
}

/** The wide gauge's series: `count` pods over 50 namespaces. */
export function wideSeries(count: number): Series[] {
  return Array.from({ length: count }, (_, k): Series => ({
    name: 'container_memory_working_set_bytes',
    labels: [
      ['namespace', `ns-${String(k % 50).padStart(2, '0')}`],
      ['pod', `app-${k}`],
      ['container', 'app'],
    ],
    value: (t, i) => 5e7 + 1e5 * hash(t, k, i) + k,
  }));
}

export const tenantName = (t: number): string => `bench-${String(t).padStart(3, '0')}`;

const families: ReadonlyArray<{ readonly family: string; readonly type: string; readonly names: readonly string[] }> = [
  { family: 'http_requests', type: 'counter', names: ['http_requests_total'] },
  { family: 'memory_usage_bytes', type: 'gauge', names: ['memory_usage_bytes'] },
  {
    family: 'request_duration_seconds',
    type: 'histogram',
    names: ['request_duration_seconds_bucket', 'request_duration_seconds_count', 'request_duration_seconds_sum'],
  },
  { family: 'container_cpu_usage_seconds', type: 'counter', names: ['container_cpu_usage_seconds_total'] },
  { family: 'kube_pod_info', type: 'gauge', names: ['kube_pod_info'] },
];

/** Samples in the layout. */
export function sampleCount(l: Layout): number {
  return l.tenants * tenantSeries().length * l.points + l.wideTenants.length * l.wideSeries * widePoints;
}

/** Writes every tenant's samples as one OpenMetrics file (families contiguous, `# EOF` last). */
export async function writeOpenMetrics(file: string, l: Layout): Promise<void> {
  const out = createWriteStream(file);
  const write = (text: string): Promise<void> =>
    out.write(text)
      ? Promise.resolve()
      : new Promise((resolve) => {
          out.once('drain', resolve);
        });
  const lines = async (t: number, s: Series, points: number, first: number, step: number): Promise<void> => {
    const labels = `{tenant="${tenantName(t)}",${s.labels.map(([k, v]) => `${k}="${v}"`).join(',')}}`;
    let chunk = '';
    for (let i = 0; i < points; i++) chunk += `${s.name}${labels} ${s.value(t, i)} ${first + i * step}\n`;
    await write(chunk);
  };
  const narrow = tenantSeries();
  for (const f of families) {
    await write(`# TYPE ${f.family} ${f.type}\n`);
    for (let t = 0; t < l.tenants; t++) {
      for (const s of narrow.filter((x) => f.names.includes(x.name))) await lines(t, s, l.points, l.firstSecond, stepSeconds);
    }
  }
  await write('# TYPE container_memory_working_set_bytes gauge\n');
  const wide = wideSeries(l.wideSeries);
  for (const t of l.wideTenants) for (const s of wide) await lines(t, s, widePoints, l.wideFirstSecond, wideStepSeconds);
  await write('# EOF\n');
  await new Promise<void>((resolve, reject) => {
    out.end(() => {
      resolve();
    });
    out.once('error', reject);
  });
}

/**
 * One remote write request: the given series of tenant `t` for steps [from, to), snappy-compressed; with
 * `tenantLabel` each series also carries `tenant="bench-…"` (for Prometheus, which holds every tenant).
 */
export function remoteWriteRequest(
  t: number,
  series: readonly Series[],
  from: number,
  to: number,
  firstSecond: number,
  step: number,
  tenantLabel = false,
): Buffer {
  const w = protobuf.Writer.create();
  const extra: (readonly [string, string])[] = tenantLabel ? [['tenant', tenantName(t)]] : [];
  for (const s of series) {
    w.uint32((1 << 3) | 2).fork(); // WriteRequest.timeseries = 1
    // Remote write sends labels sorted by name.
    const labels = [['__name__', s.name] as const, ...extra, ...s.labels].sort(([a], [b]) => (a < b ? -1 : 1));
    for (const [name, value] of labels) {
      w.uint32((1 << 3) | 2)
        .fork()
        .uint32((1 << 3) | 2)
        .string(name)
        .uint32((2 << 3) | 2)
        .string(value)
        .ldelim(); // TimeSeries.labels = 1
    }
    for (let i = from; i < to; i++) {
      // TimeSeries.samples = 2: Sample { double value = 1; int64 timestamp = 2 (ms) }
      w.uint32((2 << 3) | 2)
        .fork()
        .uint32((1 << 3) | 1)
        .double(s.value(t, i))
        .uint32((2 << 3) | 0)
        .int64((firstSecond + i * step) * 1000)
        .ldelim();
    }
    w.ldelim();
  }
  return compressSync(Buffer.from(w.finish()));
}

/** Narrow series per tenant. */
export const seriesPerTenant = tenantSeries().length;
